// Nothing extra: no message without its committed row, no dead letter the scenario did not plant,
// and after a database failover nothing announced of a commit the failover lost.
import { DATABASES, type DatabaseName } from '../stack.ts';
import { type InvariantResult, Violations, verdict } from './result.ts';
import type { OutboxRow, Snapshot } from './snapshot.ts';

/**
 * No ghost events: every message on a topic (and on its dead-letter topic) is an event whose
 * outbox row committed in the database that owns the topic, with the same key and type.
 * A ghost would be an event published from a transaction that rolled back. In a naive write mode
 * ORDER_CREATED has no row, and is a ghost when its order does not exist.
 */
export function noGhostEvents(s: Snapshot): InvariantResult {
  const violations = new Violations();
  let messages = 0;
  const committed = new Set(s.orders.map((order) => order.id));
  const sentDirectly = new Set(s.sentDirectly.map((sent) => sent.id));
  for (const database of DATABASES) {
    const rows = new Map<string, OutboxRow>(s.outbox[database].map((row) => [row.id, row]));
    const topic = s.topics.events[database];
    for (const name of [topic, `${topic}.dlt`]) {
      for (const message of s.messages.get(name) ?? []) {
        messages += 1;
        const where = `${name}@${message.partition}:${message.offset}`;
        const row = message.eventId ? rows.get(message.eventId) : undefined;
        if (!row && message.eventId && sentDirectly.has(message.eventId)) {
          // A naive write mode sent it without a row: it is a ghost if its order never committed.
          if (!committed.has(message.key ?? ''))
            violations.add(
              `ORDER_CREATED on ${name} for an order that never committed`,
              `${where} order=${message.key}`,
            );
        } else if (!row)
          violations.add(
            `message on ${name} without a committed outbox row`,
            `${where} id=${message.eventId}`,
          );
        else if (row.aggregate_id !== message.key)
          violations.add(`key differs from the row's aggregate id`, where);
        else if (row.event_type !== message.type)
          violations.add(`type differs from the row's event type`, where);
      }
    }
  }
  return verdict(
    'no-ghost-events',
    'every message on every topic has a committed outbox row with the same id, key and type',
    { messages },
    violations,
  );
}

/** The consumer groups that read each database's topic. */
const READERS: Record<DatabaseName, DatabaseName[]> = {
  orders: ['inventory', 'billing'],
  inventory: ['orders'],
  billing: ['orders'],
};

/**
 * Every dead letter is one the scenario planted: failed outbox rows are exactly the expected
 * ones, every message on a dead-letter topic is an expected poison event, and each expected
 * poison event was in fact refused by every consumer of its topic.
 */
export function deadLettersAccounted(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const expectedFailed = new Set(s.expected.outboxFailed);
  const expectedDlt = new Set(s.expected.consumerDeadLetters);
  let failedRows = 0;
  let dltMessages = 0;
  for (const database of DATABASES) {
    const rows = s.outbox[database];
    for (const row of rows) {
      if (row.status === 'failed') {
        failedRows += 1;
        if (!expectedFailed.has(row.id))
          violations.add('unexpected dead-lettered outbox row', `${row.id}: ${row.last_error}`);
      } else if (expectedFailed.has(row.id)) {
        violations.add('expected poison row not dead-lettered', `${row.id} (${row.status})`);
      }
    }
    const dlt = s.messages.get(`${s.topics.events[database]}.dlt`) ?? [];
    dltMessages += dlt.length;
    for (const message of dlt) {
      if (!message.eventId || !expectedDlt.has(message.eventId)) {
        violations.add(
          'unexpected message on a dead-letter topic',
          `${message.topic}@${message.offset} id=${message.eventId}`,
        );
      }
    }
    const ids = new Set(rows.map((row) => row.id));
    for (const id of expectedDlt) {
      if (!ids.has(id)) continue;
      for (const reader of READERS[database]) {
        const group = s.groups[reader];
        if (!dlt.some((m) => m.eventId === id && m.deadLetteredBy === group)) {
          violations.add(`expected poison event not dead-lettered by ${reader}`, id);
        }
      }
    }
  }
  return verdict(
    'dead-letters-accounted',
    'every dead letter (failed outbox row or dead-letter topic message) is an expected poison event',
    { failedRows, dltMessages, expectedFailed: expectedFailed.size, expectedDlt: expectedDlt.size },
    violations,
  );
}

/**
 * After the orders database failed over to its standby: what the failover lost, and whether any of
 * it was announced.
 * - orders lost: acknowledged with 201, absent from the promoted primary. Allowed only with
 *   asynchronous replication (the commits the standby had not received when the primary died);
 * - ghost events: a message on a topic whose outbox row the promoted primary does not have (the
 *   relay published a row the failover then lost);
 * - effects of orders that do not exist: a reservation or payment for an order the promoted
 *   primary does not have (a ghost's consequence in the other services);
 * - the window without writes: the longest gap between two consecutive orders' commits.
 * Without a failover in the run it checks nothing.
 */
export function failoverAnnouncesNoLostOrder(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const name = 'failover-announces-no-lost-order';
  const description =
    'after a database failover, no event and no effect elsewhere of a commit the failover lost; ' +
    'acknowledged orders lost only with asynchronous replication';
  if (!s.failover) return verdict(name, description, {}, violations);

  const committed = new Set(s.orders.map((order) => order.id));
  const ordersLost = s.acknowledged.filter((id) => !committed.has(id));
  if (s.failover.replication === 'sync')
    for (const id of ordersLost) violations.add('acknowledged order lost with synchronous replication', id);

  let ghostEvents = 0;
  for (const database of DATABASES) {
    const rows = new Set(s.outbox[database].map((row) => row.id));
    for (const message of s.messages.get(s.topics.events[database]) ?? []) {
      if (message.eventId && rows.has(message.eventId)) continue;
      ghostEvents += 1;
      violations.add(
        `ghost: event on ${s.topics.events[database]} whose row the failover lost`,
        `${message.type} ${message.key}`,
      );
    }
  }
  const effects = [
    ...s.reservations.map((r) => ({ what: 'reservation', order: r.order_id })),
    ...s.payments.map((p) => ({ what: 'payment', order: p.order_id })),
  ].filter((effect) => !committed.has(effect.order));
  for (const effect of effects)
    violations.add(`${effect.what} for an order that does not exist`, effect.order);

  const times = s.orders
    .flatMap((order) => (order.created_at ? [new Date(order.created_at).getTime()] : []))
    .sort((a, b) => a - b);
  let windowWithoutWritesMs = 0;
  for (let i = 1; i < times.length; i++)
    windowWithoutWritesMs = Math.max(windowWithoutWritesMs, (times[i] ?? 0) - (times[i - 1] ?? 0));

  return verdict(
    name,
    `${description} (${s.failover.replication} replication)`,
    {
      ordersLost: ordersLost.length,
      ghostEvents,
      effectsOfOrdersThatDoNotExist: effects.length,
      windowWithoutWritesMs,
    },
    violations,
  );
}
