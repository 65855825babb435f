import { DATABASES } from '../stack.ts';
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
