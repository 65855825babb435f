import { DATABASES } from '../stack.ts';
import { type InvariantResult, Violations, verdict } from './result.ts';
import type { Snapshot } from './snapshot.ts';

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
