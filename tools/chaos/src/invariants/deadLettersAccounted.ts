import { DATABASES, type DatabaseName } from '../stack.ts';
import { type InvariantResult, Violations, verdict } from './result.ts';
import type { Snapshot } from './snapshot.ts';

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
