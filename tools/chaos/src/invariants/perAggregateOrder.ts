import { DATABASES } from '../stack.ts';
import { type InvariantResult, Violations, verdict } from './result.ts';
import type { Snapshot } from './snapshot.ts';

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
