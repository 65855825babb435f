// Nothing twice, nothing out of order: first deliveries in seq order per aggregate, every
// duplicate delivered skipped, every effect applied once.
import { topicFor } from '@outbox/contracts';
import { AGGREGATE_OF } from '@outbox/devstack/stack-plan';
import { DATABASES, type DatabaseName } from '../stack.ts';
import { type InvariantResult, tally, Violations, verdict } from './result.ts';
import { orderCreatedEvents, type Snapshot } from './snapshot.ts';

/**
 * Per aggregate, the first delivery of each event is in outbox `seq` order, on one partition.
 * A duplicate is allowed only as a re-send of an event already delivered (a relay crashed
 * between the broker's ack and marking the row); it never lets a later event overtake.
 */
export function perAggregateOrder(s: Snapshot): InvariantResult {
  const violations = new Violations();
  let aggregates = 0;
  let resends = 0;
  for (const database of DATABASES) {
    const topic = s.topics.events[database];
    const seqOf = new Map(s.outbox[database].map((row) => [row.id, row.seq]));
    // Sent by the request itself (a naive write mode): the first event of its order by construction.
    if (database === 'orders') for (const sent of s.sentDirectly) seqOf.set(sent.id, 0);
    const firstDeliveries = new Map<string, { ids: string[]; partition: number }>();
    const seen = new Set<string>();
    for (const message of s.messages.get(topic) ?? []) {
      if (!message.eventId || message.key === undefined) continue; // a ghost: no-ghost-events reports it
      const aggregate = firstDeliveries.get(message.key) ?? { ids: [], partition: message.partition };
      firstDeliveries.set(message.key, aggregate);
      if (aggregate.partition !== message.partition) {
        violations.add(`${topic}: one aggregate on two partitions`, message.key);
      }
      if (seen.has(message.eventId)) resends += 1;
      else {
        seen.add(message.eventId);
        aggregate.ids.push(message.eventId);
      }
    }
    for (const [key, { ids }] of firstDeliveries) {
      aggregates += 1;
      const seqs = ids.map((id) => seqOf.get(id) ?? Number.NaN);
      const ordered = seqs.every((seq, i) => i === 0 || (seqs[i - 1] ?? 0) < seq);
      if (!ordered)
        violations.add(`${topic}: first deliveries out of seq order`, `${key} (seq ${seqs.join(',')})`);
    }
  }
  return verdict(
    'per-aggregate-order',
    'per aggregate, first deliveries follow the outbox seq order; duplicates are only re-sends',
    { aggregates, resends },
    violations,
  );
}

/** The replies inventory and billing send the orders saga. */
const REPLY_TYPES = [
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

/** What each consumer handles, from which databases' topics (other types it ignores and does not record). */
const CONSUMES: Record<DatabaseName, { from: DatabaseName[]; types: string[] }> = {
  inventory: { from: ['orders'], types: ['ORDER_CREATED', 'ORDER_CANCELLED'] },
  billing: { from: ['orders'], types: ['ORDER_CREATED', 'ORDER_CANCELLED'] },
  orders: { from: ['inventory', 'billing'], types: REPLY_TYPES },
};

/**
 * Duplicates delivered and duplicates skipped add up. Delivered: copies of an event on the topics
 * beyond the first (re-sends by a relay). Each consumer recorded every distinct event it handles
 * exactly once in processed_events, no more and no fewer, so every extra copy (and every
 * redelivery after a consumer crash, which the topic does not show) was skipped; applied-exactly-
 * once checks that the skipped copies left no effect. The consumers' own duplicate counters count
 * since their last start only, so they are reported next to these figures, not checked.
 */
export function duplicatesReconcile(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const counts: Record<string, number> = {};
  const poison = new Set(s.expected.consumerDeadLetters);
  for (const database of DATABASES) {
    const messages = s.messages.get(s.topics.events[database]) ?? [];
    const topic = topicFor(AGGREGATE_OF[database]); // without the run's prefix, for the report
    counts[`${topic} messages`] = messages.length;
    counts[`${topic} duplicates`] = messages.length - new Set(messages.map((m) => m.eventId)).size;
  }
  for (const consumer of DATABASES) {
    const { from, types } = CONSUMES[consumer];
    const copies = from
      .flatMap((database) => s.messages.get(s.topics.events[database]) ?? [])
      .filter((m) => m.eventId && m.type && types.includes(m.type) && !poison.has(m.eventId));
    const distinct = new Set(copies.map((m) => m.eventId as string));
    const processed = new Set(s.processed[consumer].map((row) => row.event_id));
    for (const id of distinct)
      if (!processed.has(id)) violations.add(`${consumer} never recorded a delivered event`, id);
    for (const id of processed)
      if (!distinct.has(id)) violations.add(`${consumer} recorded an event that is not on its topics`, id);
    counts[`${consumer} consumer: copies delivered`] = copies.length;
    counts[`${consumer} consumer: duplicates`] = copies.length - distinct.size;
    counts[`${consumer} consumer: recorded`] = processed.size;
    const counter = s.serviceDuplicateCounters[consumer];
    if (counter !== undefined)
      counts[`${consumer} consumer: own duplicate counter since its last start`] = counter;
  }
  return verdict(
    'duplicates-reconcile',
    'each consumer recorded each distinct event once; every extra copy delivered was skipped',
    counts,
    violations,
  );
}
