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

/**
 * Record a reply and decide the order's fate, inside the consumer's applyOnce transaction.
 *
 * Replies arrive in any order and possibly more than once (applyOnce drops exact duplicates),
 * so the decision depends only on what is known, never on arrival order:
 * - any rejection while PENDING → CANCELLED, with ORDER_CANCELLED so the other side compensates;
 * - stock RESERVED and payment AUTHORIZED while PENDING → CONFIRMED, with ORDER_CONFIRMED;
 * - anything after the order is decided is recorded in its history and changes nothing else.
 * The order row is locked first, so two replies for one order are decided one after the other.
 */
export async function recordReply(tx: Tx, reply: Reply): Promise<string> {
  const [order] = await tx.$queryRaw<OrderRow[]>`
    select status, stock_status, payment_status from orders where id = ${reply.orderId}::uuid for update`;
  if (!order) return 'UNKNOWN_ORDER';

  const stockStatus = 'stockStatus' in reply ? reply.stockStatus : order.stock_status;
  const paymentStatus = 'paymentStatus' in reply ? reply.paymentStatus : order.payment_status;
  await tx.orderHistory.create({
    data: { orderId: reply.orderId, eventType: reply.eventType, detail: reply.reason ?? null },
  });

  let status = order.status;
  let cancelReason: string | undefined;
  if (status === 'PENDING' && (stockStatus === 'REJECTED' || paymentStatus === 'DECLINED')) {
    status = 'CANCELLED';
    cancelReason = reply.reason ?? reply.eventType;
  } else if (status === 'PENDING' && stockStatus === 'RESERVED' && paymentStatus === 'AUTHORIZED') {
    status = 'CONFIRMED';
  }

  await tx.order.update({
    where: { id: reply.orderId },
    data: { stockStatus, paymentStatus, status, ...(cancelReason ? { cancelReason } : {}) },
  });
  if (status === order.status) return status;

  if (status === 'CONFIRMED') {
    const data: OrderConfirmedV1 = { orderId: reply.orderId };
    await writeEvent(tx, EVENT_SOURCE, orderEvent(ORDER_CONFIRMED, reply.orderId, data));
  } else {
    const data: OrderCancelledV1 = { orderId: reply.orderId, reason: cancelReason ?? 'cancelled' };
    await writeEvent(tx, EVENT_SOURCE, orderEvent(ORDER_CANCELLED, reply.orderId, data));
  }
  await tx.orderHistory.create({
    data: { orderId: reply.orderId, eventType: `ORDER_${status}`, detail: cancelReason ?? null },
  });
  return status;
}

function orderEvent<T>(type: string, orderId: string, data: T) {
  return { type, schemaVersion: 1, aggregateType: 'order', aggregateId: orderId, data };
}
