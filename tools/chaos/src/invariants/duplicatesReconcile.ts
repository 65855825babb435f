import { topicFor } from '@outbox/contracts';
import { AGGREGATE_OF } from '@outbox/devstack/stack-plan';
import { DATABASES, type DatabaseName } from '../stack.ts';
import { REPLY_TYPES } from './appliedExactlyOnce.ts';
import { type InvariantResult, Violations, verdict } from './result.ts';
import type { Snapshot } from './snapshot.ts';

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
