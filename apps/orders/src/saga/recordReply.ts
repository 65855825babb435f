import {
  ORDER_CANCELLED,
  ORDER_CONFIRMED,
  type OrderCancelledV1,
  type OrderConfirmedV1,
  writeEvent,
} from '@outbox/events';
import type { Tx } from '../db.ts';
import { EVENT_SOURCE } from '../orders/placeOrder.ts';

/** What one reply from inventory or billing says about an order. */
export type Reply =
  | { eventType: string; orderId: string; stockStatus: 'RESERVED' | 'REJECTED' | 'RELEASED'; reason?: string }
  | {
      eventType: string;
      orderId: string;
      paymentStatus: 'AUTHORIZED' | 'DECLINED' | 'VOIDED';
      reason?: string;
    };

type OrderRow = { status: string; stock_status: string | null; payment_status: string | null };

/** A side's last word: a refusal, or a grant given back. A late reply never moves a side back from it. */
const FINAL_SIDE_STATUSES = new Set(['REJECTED', 'RELEASED', 'DECLINED', 'VOIDED']);

/**
 * Record a reply and decide the order's fate, inside the consumer's applyOnce transaction.
 *
 * Replies arrive in any order and possibly more than once (applyOnce drops exact duplicates; a
 * dead-letter replay can bring a STOCK_RESERVED after its STOCK_RELEASED), so the decision depends
 * only on what is known, never on arrival order:
 * - any rejection while PENDING → CANCELLED, with ORDER_CANCELLED so the other side compensates;
 * - stock RESERVED and payment AUTHORIZED while PENDING → CONFIRMED, with ORDER_CONFIRMED;
 * - anything after the order is decided is recorded in its history; a side's status only moves
 *   forward (RESERVED → RELEASED, never back).
 * A grant (RESERVED, AUTHORIZED) that reaches an already CANCELLED order needs no new event: the
 * ORDER_CANCELLED written when the order was cancelled follows that side's ORDER_CREATED on its
 * partition (or, replayed out of order, finds the side's remembered cancel), so the side gives it
 * back and says so. If it has not said so within the saga timeout, sagaTimeout.ts sends
 * ORDER_CANCELLED once more.
 * The order row is locked first, so two replies for one order are decided one after the other.
 */
export async function recordReply(tx: Tx, reply: Reply): Promise<string> {
  const [order] = await tx.$queryRaw<OrderRow[]>`
    select status, stock_status, payment_status from orders where id = ${reply.orderId}::uuid for update`;
  if (!order) return 'UNKNOWN_ORDER';

  const stockStatus = forward(order.stock_status, 'stockStatus' in reply ? reply.stockStatus : null);
  const paymentStatus = forward(order.payment_status, 'paymentStatus' in reply ? reply.paymentStatus : null);
  await tx.orderHistory.create({
    data: { orderId: reply.orderId, eventType: reply.eventType, detail: reply.reason ?? null },
  });
  await tx.order.update({ where: { id: reply.orderId }, data: { stockStatus, paymentStatus } });
  if (order.status !== 'PENDING') return order.status;

  if (stockStatus === 'REJECTED' || paymentStatus === 'DECLINED') {
    await cancelOrder(tx, reply.orderId, reply.reason ?? reply.eventType);
    return 'CANCELLED';
  }
  if (stockStatus === 'RESERVED' && paymentStatus === 'AUTHORIZED') {
    await tx.$executeRaw`
      update orders set status = 'CONFIRMED', decided_at = now() where id = ${reply.orderId}::uuid`;
    const data: OrderConfirmedV1 = { orderId: reply.orderId };
    await writeEvent(tx, EVENT_SOURCE, orderEvent(ORDER_CONFIRMED, reply.orderId, data));
    await tx.orderHistory.create({ data: { orderId: reply.orderId, eventType: ORDER_CONFIRMED } });
    return 'CONFIRMED';
  }
  return 'PENDING';
}

/**
 * Cancel a PENDING order (locked by the caller) and tell inventory and billing, in the caller's
 * transaction: on a rejection (recordReply) or when the saga timed out (sagaTimeout.ts).
 */
export async function cancelOrder(tx: Tx, orderId: string, reason: string): Promise<void> {
  // decided_at from the database's clock, like created_at: the timeout compares them with now().
  await tx.$executeRaw`
    update orders set status = 'CANCELLED', cancel_reason = ${reason}, decided_at = now()
     where id = ${orderId}::uuid`;
  const data: OrderCancelledV1 = { orderId, reason };
  await writeEvent(tx, EVENT_SOURCE, orderEvent(ORDER_CANCELLED, orderId, data));
  await tx.orderHistory.create({ data: { orderId, eventType: ORDER_CANCELLED, detail: reason } });
}

/** A side's new status: the reply's, unless the side has already said its last word. */
function forward(current: string | null, incoming: string | null): string | null {
  if (incoming === null) return current;
  return current !== null && FINAL_SIDE_STATUSES.has(current) ? current : incoming;
}

export function orderEvent<T>(type: string, orderId: string, data: T) {
  return { type, schemaVersion: 1, aggregateType: 'order', aggregateId: orderId, data };
}
