// Nothing lost: what the API acknowledged is committed, every committed row reaches its topic,
// and, whatever the write mode, every committed order's ORDER_CREATED is there (and nothing else).
import { DATABASES } from '../stack.ts';
import { type InvariantResult, tally, Violations, verdict } from './result.ts';
import { orderCreatedEvents, type Snapshot } from './snapshot.ts';

/**
 * An order the API acknowledged is committed, and every committed order has exactly one
 * ORDER_CREATED (its outbox row; in a naive write mode, the event it sent itself).
 */
export function acknowledgedOrdersCommitted(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const committed = new Set(s.orders.map((order) => order.id));
  // In a naive write mode the events the process sent itself count; no-lost-or-ghost-orders names the failures.
  const created = orderCreatedEvents(s);
  const createdPerOrder = tally(created.map((row) => row.aggregate_id));

  // An asynchronous standby promoted after the primary died lacks the primary's last commits:
  // failover-announces-no-lost-order counts those orders and judges what was said of them.
  const lossAllowed = s.failover?.replication === 'async';
  for (const id of s.acknowledged) {
    if (!committed.has(id) && !lossAllowed) violations.add('acknowledged with 201 but not committed', id);
  }
  for (const id of committed) {
    const count = createdPerOrder.get(id) ?? 0;
    if (count !== 1)
      violations.add('committed order without exactly one ORDER_CREATED row', `${id} (${count})`);
  }
  for (const row of created) {
    if (!committed.has(row.aggregate_id))
      violations.add('ORDER_CREATED for an order that was never committed', row.id);
  }
  const acknowledged = new Set(s.acknowledged);
  return verdict(
    'acknowledged-orders-committed',
    'every order the API acknowledged is committed, with exactly one ORDER_CREATED in its outbox',
    {
      acknowledged: s.acknowledged.length,
      committed: committed.size,
      // Committed but never acknowledged: the client gave up (timeout) after the commit. Allowed.
      committedNotAcknowledged: [...committed].filter((id) => !acknowledged.has(id)).length,
    },
    violations,
  );
}

/**
 * Nothing lost: every outbox row was published and is on its topic, unless it is expected poison.
 * With the polling relays a row must also be marked `published`. In debezium mode a row is marked
 * only once the connector's slot confirmed it, up to Connect's offset flush interval later, so the
 * topic alone says whether a row was published.
 */
export function everyEventPublished(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const expectedFailed = new Set(s.expected.outboxFailed);
  const marksRows = s.relayMode === 'polling';
  let rows = 0;
  let published = 0;
  for (const database of DATABASES) {
    const onTopic = new Set((s.messages.get(s.topics.events[database]) ?? []).map((m) => m.eventId));
    for (const row of s.outbox[database]) {
      rows += 1;
      if (expectedFailed.has(row.id)) continue; // dead-letters-accounted checks these
      if (marksRows && row.status !== 'published') {
        violations.add(`${database} outbox row still ${row.status}`, `${row.id} ${row.event_type}`);
      } else if (!onTopic.has(row.id)) {
        violations.add(
          marksRows
            ? `${database} row marked published but not on ${s.topics.events[database]}`
            : `${database} outbox row not on ${s.topics.events[database]} (debezium mode)`,
          marksRows ? row.id : `${row.id} ${row.event_type}`,
        );
      } else {
        published += 1;
      }
    }
  }
  return verdict(
    'every-event-published',
    marksRows
      ? 'every outbox row (all three databases) is published and its event is on its topic'
      : 'every outbox row (all three databases) has its event on its topic (debezium mode: rows are never marked)',
    { outboxRows: rows, publishedAndOnTopic: published, expectedPoison: expectedFailed.size },
    violations,
  );
}

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
