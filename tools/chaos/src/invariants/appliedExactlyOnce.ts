import { type InvariantResult, tally, Violations, verdict } from './result.ts';
import { orderCreatedEvents, type Snapshot } from './snapshot.ts';

/** The replies inventory and billing send the orders saga. */
export const REPLY_TYPES = [
  'STOCK_RESERVED',
  'STOCK_REJECTED',
  'STOCK_RELEASED',
  'PAYMENT_AUTHORIZED',
  'PAYMENT_DECLINED',
  'PAYMENT_VOIDED',
];

/**
 * Each consumer's effects happened once per event, counted in its own tables and outbox:
 * inventory one reservation and one answer per order (one release per cancelled reservation),
 * billing one payment and one answer per order (one void per cancelled authorization), orders
 * one history entry per reply and at most one decision per order.
 */
export function appliedExactlyOnce(s: Snapshot): InvariantResult {
  const violations = new Violations();
  // Orders that exist and whose ORDER_CREATED went out; a ghost's effects are
  // no-lost-or-ghost-orders' business (there is no order to have applied them once for).
  const committed = new Set(s.orders.map((order) => order.id));
  const orderIds = new Set(
    orderCreatedEvents(s)
      .map((row) => row.aggregate_id)
      .filter((id) => s.writeMode === 'outbox' || committed.has(id)),
  );
  const perOrder = (rows: { aggregate_id: string; event_type: string }[], types: string[]) =>
    tally(rows.filter((row) => types.includes(row.event_type)).map((row) => row.aggregate_id));

  // Inventory.
  const reservations = tally(s.reservations.map((r) => r.order_id));
  const released = new Set(s.reservations.filter((r) => r.status === 'RELEASED').map((r) => r.order_id));
  const stockAnswers = perOrder(s.outbox.inventory, ['STOCK_RESERVED', 'STOCK_REJECTED']);
  const releases = perOrder(s.outbox.inventory, ['STOCK_RELEASED']);
  // Billing.
  const payments = tally(s.payments.map((p) => p.order_id));
  const voided = new Set(s.payments.filter((p) => p.status === 'VOIDED').map((p) => p.order_id));
  const paymentAnswers = perOrder(s.outbox.billing, ['PAYMENT_AUTHORIZED', 'PAYMENT_DECLINED']);
  const voids = perOrder(s.outbox.billing, ['PAYMENT_VOIDED']);
  // Orders.
  const decisions = perOrder(s.outbox.orders, ['ORDER_CONFIRMED', 'ORDER_CANCELLED']);

  const expectCount = (what: string, orderId: string, actual: number, expected: number) => {
    if (actual !== expected) violations.add(`${what}: expected ${expected}`, `${orderId} (${actual})`);
  };
  for (const id of orderIds) {
    expectCount('inventory reservations per order', id, reservations.get(id) ?? 0, 1);
    expectCount('inventory STOCK_RESERVED/REJECTED per order', id, stockAnswers.get(id) ?? 0, 1);
    expectCount('inventory STOCK_RELEASED per order', id, releases.get(id) ?? 0, released.has(id) ? 1 : 0);
    expectCount('billing payments per order', id, payments.get(id) ?? 0, 1);
    expectCount('billing PAYMENT_AUTHORIZED/DECLINED per order', id, paymentAnswers.get(id) ?? 0, 1);
    expectCount('billing PAYMENT_VOIDED per order', id, voids.get(id) ?? 0, voided.has(id) ? 1 : 0);
    expectCount('orders ORDER_CONFIRMED/CANCELLED per order', id, decisions.get(id) ?? 0, 1);
  }

  // Orders records each reply in the order's history exactly once.
  let replies = 0;
  for (const row of [...s.outbox.inventory, ...s.outbox.billing]) {
    if (!REPLY_TYPES.includes(row.event_type)) continue;
    replies += 1;
    const recorded = s.history.get(`${row.aggregate_id}/${row.event_type}`) ?? 0;
    expectCount(`orders history entries per ${row.event_type} reply`, row.aggregate_id, recorded, 1);
  }
  return verdict(
    'applied-exactly-once',
    "each consumer's effects happened once per event (reservations, payments, replies, history, decisions)",
    { orders: orderIds.size, replies },
    violations,
  );
}
