import { type InvariantResult, Violations, verdict } from './result.ts';
import type { Snapshot } from './snapshot.ts';

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
