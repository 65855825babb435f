import { DATABASES } from '../stack.ts';
import { type InvariantResult, Violations, verdict } from './result.ts';
import type { Snapshot } from './snapshot.ts';

/** Nothing lost: every outbox row was published and is on its topic, unless it is expected poison. */
export function everyEventPublished(s: Snapshot): InvariantResult {
  const violations = new Violations();
  const expectedFailed = new Set(s.expected.outboxFailed);
  let rows = 0;
  let published = 0;
  for (const database of DATABASES) {
    const onTopic = new Set((s.messages.get(s.topics.events[database]) ?? []).map((m) => m.eventId));
    for (const row of s.outbox[database]) {
      rows += 1;
      if (expectedFailed.has(row.id)) continue; // dead-letters-accounted checks these
      if (row.status !== 'published') {
        violations.add(`${database} outbox row still ${row.status}`, `${row.id} ${row.event_type}`);
      } else if (!onTopic.has(row.id)) {
        violations.add(`${database} row marked published but not on ${s.topics.events[database]}`, row.id);
      } else {
        published += 1;
      }
    }
  }
  return verdict(
    'every-event-published',
    'every outbox row (all three databases) is published and its event is on its topic',
    { outboxRows: rows, publishedAndOnTopic: published, expectedPoison: expectedFailed.size },
    violations,
  );
}
