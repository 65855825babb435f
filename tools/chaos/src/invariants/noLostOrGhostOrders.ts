import { type InvariantResult, tally, Violations, verdict } from './result.ts';
import type { Snapshot } from './snapshot.ts';

/** The figures of the dual-write table in docs/chaos.md, in its column order, with their headings. */
export const DUAL_WRITE_COUNTS = {
  committed: 'orders committed',
  lost: 'lost events',
  ghost: 'ghost events',
  ghostReservations: 'ghost reservations',
  ghostPayments: 'ghost payments',
  duplicates: 'duplicate ORDER_CREATED',
  stuckPending: 'stuck PENDING',
} as const;

/**
 * What the outbox exists to prevent, read from the topic and the databases whatever the write mode:
 * - lost: a committed order whose ORDER_CREATED never reached the topic; nobody will ever hear of
 *   it, and it stays PENDING until the saga's timeout cancels it;
 * - ghost: an ORDER_CREATED on the topic for an order that never committed; inventory reserves
 *   and billing charges a phantom (ghost reservations and payments count those effects).
 * Also counted, not judged: ORDER_CREATED copies beyond the first per order (duplicates, which the
 * consumers' inbox absorbs) and orders still PENDING after the system went quiet (stuck).
 */
export function noLostOrGhostOrders(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const committed = new Set(s.orders.map((order) => order.id));
  // A poison scenario commits ORDER_CREATED rows with no order on purpose (dead-letters-accounted
  // judges them); they were written by the test, not by a write path, so they are no ghosts of one.
  const planted = new Set([...s.expected.outboxFailed, ...s.expected.consumerDeadLetters]);
  const created = (s.messages.get(s.topics.events.orders) ?? []).filter(
    (m) => m.type === 'ORDER_CREATED' && m.key !== undefined && !planted.has(m.eventId ?? ''),
  );
  const copiesPerOrder = tally(created.map((m) => m.key as string));

  for (const id of committed)
    if (!copiesPerOrder.has(id))
      violations.add('lost: committed order whose ORDER_CREATED is not on the topic', id);
  for (const id of copiesPerOrder.keys())
    if (!committed.has(id))
      violations.add('ghost: ORDER_CREATED on the topic for an order that never committed', id);
  const ghostReservations = s.reservations.filter((r) => !committed.has(r.order_id));
  const ghostPayments = s.payments.filter((p) => !committed.has(p.order_id));
  for (const r of ghostReservations)
    violations.add(
      'ghost: inventory reservation for an order that does not exist',
      `${r.order_id} (${r.status})`,
    );
  for (const p of ghostPayments)
    violations.add('ghost: billing payment for an order that does not exist', `${p.order_id} (${p.status})`);

  const counts: Record<keyof typeof DUAL_WRITE_COUNTS, number> = {
    committed: committed.size,
    lost: [...committed].filter((id) => !copiesPerOrder.has(id)).length,
    ghost: [...copiesPerOrder.keys()].filter((id) => !committed.has(id)).length,
    ghostReservations: ghostReservations.length,
    ghostPayments: ghostPayments.length,
    duplicates: created.length - copiesPerOrder.size,
    stuckPending: s.orders.filter((order) => order.status === 'PENDING').length,
  };
  return verdict(
    'no-lost-or-ghost-orders',
    `every committed order's ORDER_CREATED is on the topic, and every ORDER_CREATED there (and every reservation and payment) is for a committed order (write mode ${s.writeMode})`,
    counts,
    violations,
  );
}
