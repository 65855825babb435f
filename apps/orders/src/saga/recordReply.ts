import { type NewEvent, ORDER_CANCELLED, orderCancelled, orderConfirmed } from '@outbox/contracts';
import { writeEvent } from '@outbox/outbox';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';
import { EVENT_SOURCE } from '../orders/createOrder.ts';

/** What one reply from inventory or billing says about an order. */
export type Reply =
  | { eventType: string; orderId: string; stockStatus: 'RESERVED' | 'REJECTED' | 'RELEASED'; reason?: string }
  | {
      eventType: string;
      orderId: string;
      paymentStatus: 'AUTHORIZED' | 'DECLINED' | 'VOIDED';
      reason?: string;
    };

type OrderState = {
  status: string;
  stock_status: string | null;
  payment_status: string | null;
  cancel_reason: string | null;
  decided: boolean;
};

/** A side's last word: a refusal, or a grant given back. A late reply never moves a side back from it. */
const FINAL_SIDE_STATUSES = new Set(['REJECTED', 'RELEASED', 'DECLINED', 'VOIDED']);

// The orders the replies are about, locked in id order: a chunk of the other topic's replies
// locks its orders in the same order, so the two never deadlock, and two replies for one order
// are decided one after the other.
const lockOrders = `
  select id::text, status, stock_status, payment_status, cancel_reason
    from orders where id = any($1::uuid[]) order by id for update`;

// The decisions of a chunk in one statement: each order's new state, and its history in the
// order things happened (`with ordinality`: history ids follow the array).
const saveDecisions = `
  with history as (
    insert into order_history (order_id, event_type, detail)
    select order_id, event_type, detail
      from unnest($7::uuid[], $8::text[], $9::text[]) with ordinality as h (order_id, event_type, detail, n)
     order by n
  )
  update orders o
     set status = v.status, stock_status = v.stock_status, payment_status = v.payment_status,
         cancel_reason = v.cancel_reason, decided_at = case when v.decided then now() else o.decided_at end
    from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[])
         as v (id, status, stock_status, payment_status, cancel_reason, decided)
   where o.id = v.id`;

export type RecordedReply = { outcome: string; replies: NewEvent[] };

/**
 * Record a chunk's replies, in offset order, and decide each order's fate, inside the consumer's
 * chunk transaction: the orders are locked with one statement, decided here (decide() below, one
 * reply after the other, exactly as if they had come one by one), and written back with one.
 */
export async function recordReplies(tx: SqlExecutor, replies: Reply[]): Promise<RecordedReply[]> {
  const rows = await queryRows<Omit<OrderState, 'decided'> & { id: string }>(tx, lockOrders, [
    [...new Set(replies.map((reply) => reply.orderId))],
  ]);
  const orders = new Map(rows.map(({ id, ...row }) => [id, { ...row, decided: false }]));
  const history: { orderId: string; eventType: string; detail: string | null }[] = [];
  const results = replies.map((reply): RecordedReply => {
    const order = orders.get(reply.orderId);
    if (!order) return { outcome: 'UNKNOWN_ORDER', replies: [] };
    const { outcome, event } = decide(order, reply);
    history.push({ orderId: reply.orderId, eventType: reply.eventType, detail: reply.reason ?? null });
    if (event) history.push({ orderId: reply.orderId, eventType: event.type, detail: order.cancel_reason });
    return { outcome, replies: event ? [event] : [] };
  });
  if (history.length > 0) {
    const ids = [...orders.keys()];
    const states = ids.map((id) => orders.get(id) as OrderState);
    await queryRows(tx, saveDecisions, [
      ids,
      states.map((state) => state.status),
      states.map((state) => state.stock_status),
      states.map((state) => state.payment_status),
      states.map((state) => state.cancel_reason),
      states.map((state) => state.decided),
      history.map((entry) => entry.orderId),
      history.map((entry) => entry.eventType),
      history.map((entry) => entry.detail),
    ]);
  }
  return results;
}

/**
 * What one reply does to an order (`order` is updated in place), and the event that tells the
 * other services, if it decided the order.
 *
 * Replies arrive in any order and possibly more than once (the inbox drops exact duplicates; a
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
 */
export function decide(order: OrderState, reply: Reply): { outcome: string; event?: NewEvent } {
  order.stock_status = forward(order.stock_status, 'stockStatus' in reply ? reply.stockStatus : null);
  order.payment_status = forward(order.payment_status, 'paymentStatus' in reply ? reply.paymentStatus : null);
  if (order.status !== 'PENDING') return { outcome: order.status };
  if (order.stock_status === 'REJECTED' || order.payment_status === 'DECLINED') {
    const reason = reply.reason ?? reply.eventType;
    Object.assign(order, { status: 'CANCELLED', cancel_reason: reason, decided: true });
    return { outcome: 'CANCELLED', event: orderCancelled({ orderId: reply.orderId, reason }) };
  }
  if (order.stock_status === 'RESERVED' && order.payment_status === 'AUTHORIZED') {
    Object.assign(order, { status: 'CONFIRMED', decided: true });
    return { outcome: 'CONFIRMED', event: orderConfirmed({ orderId: reply.orderId }) };
  }
  return { outcome: 'PENDING' };
}

/**
 * Cancel a PENDING order (locked by the caller) and tell inventory and billing, in the caller's
 * transaction, when the saga timed out (sagaTimeout.ts).
 */
export async function cancelOrder(tx: SqlExecutor, orderId: string, reason: string): Promise<void> {
  // decided_at from the database's clock, like created_at: the timeout compares them with now().
  await queryRows(
    tx,
    `with history as (
       insert into order_history (order_id, event_type, detail) values ($1::uuid, $2, $3)
     )
     update orders set status = 'CANCELLED', cancel_reason = $3, decided_at = now() where id = $1::uuid`,
    [orderId, ORDER_CANCELLED, reason],
  );
  await writeEvent(tx, EVENT_SOURCE, orderCancelled({ orderId, reason }));
}

/** A side's new status: the reply's, unless the side has already said its last word. */
function forward(current: string | null, incoming: string | null): string | null {
  if (incoming === null) return current;
  return current !== null && FINAL_SIDE_STATUSES.has(current) ? current : incoming;
}
