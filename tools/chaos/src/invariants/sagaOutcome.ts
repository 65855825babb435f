// What the saga leaves behind: every order decided in agreement with inventory and billing, and
// the stock taken equal to what the confirmed orders hold.
import { type InvariantResult, Violations, verdict } from './result.ts';
import type { Snapshot } from './snapshot.ts';

/**
 * Every order reached a final state that agrees with inventory and billing: CONFIRMED iff stock
 * is reserved and the payment authorized; CANCELLED ones had a rejection or decline, and what the
 * other side had granted was compensated (released, voided).
 */
export function sagaFinalStates(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const reservation = new Map(s.reservations.map((r) => [r.order_id, r.status]));
  const payment = new Map(s.payments.map((p) => [p.order_id, p.status]));
  const counts = { confirmed: 0, cancelled: 0, pending: 0 };
  for (const order of s.orders) {
    const stock = reservation.get(order.id);
    const paid = payment.get(order.id);
    const detail = `${order.id} (${order.status}, stock ${stock}, payment ${paid})`;
    if (order.status === 'CONFIRMED') {
      counts.confirmed += 1;
      if (stock !== 'RESERVED' || paid !== 'AUTHORIZED')
        violations.add('confirmed without reserved stock and authorized payment', detail);
    } else if (order.status === 'CANCELLED') {
      counts.cancelled += 1;
      if (stock !== 'REJECTED' && paid !== 'DECLINED')
        violations.add('cancelled without a rejection or decline', detail);
      if (stock === 'RESERVED') violations.add('cancelled but stock still reserved (not released)', detail);
      if (paid === 'AUTHORIZED')
        violations.add('cancelled but payment still authorized (not voided)', detail);
    } else {
      counts.pending += 1;
      violations.add('not final', detail);
    }
    if (order.stock_status !== (stock ?? null))
      violations.add("orders' stock_status differs from inventory", detail);
    if (order.payment_status !== (paid ?? null))
      violations.add("orders' payment_status differs from billing", detail);
  }
  return verdict(
    'saga-final-states',
    'every order is CONFIRMED (stock reserved and payment authorized) or CANCELLED and compensated',
    counts,
    violations,
  );
}

/**
 * Stock adds up: never negative, and for every SKU the stock taken since the start equals the
 * quantities held by RESERVED reservations, which are exactly the confirmed orders' lines.
 * (Negative stock mid-run is prevented by the `available >= 0` check constraint; this reads the end.)
 */
export function stockBalance(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const reservedIds = new Set(s.reservations.filter((r) => r.status === 'RESERVED').map((r) => r.order_id));
  const confirmedIds = new Set(s.orders.filter((o) => o.status === 'CONFIRMED').map((o) => o.id));
  const held = new Map<string, number>();
  for (const item of s.reservationItems) {
    if (reservedIds.has(item.order_id)) held.set(item.sku, (held.get(item.sku) ?? 0) + item.quantity);
  }
  for (const [sku, available] of s.stock) {
    if (available < 0) violations.add('negative stock', `${sku} (${available})`);
    const taken = (s.initialStock.get(sku) ?? 0) - available;
    const reserved = held.get(sku) ?? 0;
    if (taken !== reserved)
      violations.add(
        'stock taken differs from reserved quantities',
        `${sku} (taken ${taken}, reserved ${reserved})`,
      );
  }
  for (const id of reservedIds)
    if (!confirmedIds.has(id)) violations.add('stock reserved for an order that is not confirmed', id);
  for (const id of confirmedIds)
    if (!reservedIds.has(id)) violations.add('confirmed order without a reservation', id);

  const lines = (items: { order_id: string; sku: string; quantity: number }[]) =>
    new Set(
      items.filter((i) => confirmedIds.has(i.order_id)).map((i) => `${i.order_id}/${i.sku}/${i.quantity}`),
    );
  const ordered = lines(s.orderItems);
  const reserved = lines(s.reservationItems);
  for (const line of ordered)
    if (!reserved.has(line)) violations.add('confirmed order line not reserved as ordered', line);
  for (const line of reserved)
    if (!ordered.has(line)) violations.add('reserved line the order does not have', line);

  return verdict(
    'stock-balance',
    'stock is never negative and stock taken equals the reserved lines of the confirmed orders',
    {
      skus: s.stock.size,
      unitsReserved: [...held.values()].reduce((a, b) => a + b, 0),
      reservedOrders: reservedIds.size,
    },
    violations,
  );
}
