import type { EventEnvelope } from '@outbox/contracts';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';

// The dedup write: one processed_events row per (consumer, event id), inserted in the same
// transaction as the event's effect. One statement records a whole chunk; `returning` says which
// events were new. `on conflict do nothing` also absorbs an id that appears twice in the same
// chunk (it is returned once).
const recordProcessedSql = `
  insert into processed_events (consumer, event_id, event_type)
  select * from unnest($1::text[], $2::uuid[], $3::text[])
  on conflict do nothing
  returning event_id::text as event_id`;

/**
 * Record `events` as processed by `consumer` inside `tx`; returns the ids (lower case) that were
 * not recorded before: the events whose effects must run now. An id missing from the result was
 * applied by an earlier transaction that committed, so its effect must not run again.
 */
export async function recordProcessed(
  tx: SqlExecutor,
  consumer: string,
  events: readonly Pick<EventEnvelope, 'id' | 'type'>[],
): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const rows = await queryRows<{ event_id: string }>(tx, recordProcessedSql, [
    events.map(() => consumer),
    events.map((event) => event.id),
    events.map((event) => event.type),
  ]);
  return new Set(rows.map((row) => row.event_id.toLowerCase()));
}

/** Whether an event of the chunk is to be applied now. */
export type NewEventCheck = (eventId: string) => boolean;

/**
 * The events recordProcessed found new, each once: a second copy of the same event in the chunk
 * is a duplicate, like one applied by an earlier transaction.
 */
export function firstCopyOf(fresh: Set<string>): NewEventCheck {
  return (eventId) => fresh.delete(eventId.toLowerCase());
}
