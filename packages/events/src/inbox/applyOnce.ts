import type { EventEnvelope } from '../envelope.ts';
import { queryRows, type SqlExecutor } from '../sqlExecutor.ts';

const recordProcessed = `
  insert into processed_events (consumer, event_id, event_type)
  values ($1, $2::uuid, $3)
  on conflict (consumer, event_id) do nothing
  returning event_id`;

export type ApplyResult = 'applied' | 'duplicate';

/**
 * Apply an event's effect exactly once, however often the broker delivers it.
 * The processed_events row and the effect commit in ONE transaction: if the row already exists
 * the event was applied before and nothing runs; if the transaction fails, neither is kept and
 * the redelivery applies it. `transaction` is e.g. `(fn) => prisma.$transaction(fn)`.
 */
export async function applyOnce<Tx extends SqlExecutor>(
  transaction: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>,
  consumer: string,
  event: Pick<EventEnvelope, 'id' | 'type'>,
  effect: (tx: Tx) => Promise<void>,
): Promise<ApplyResult> {
  return transaction(async (tx) => {
    const inserted = await queryRows(tx, recordProcessed, [consumer, event.id, event.type]);
    if (inserted.length === 0) return 'duplicate';
    await effect(tx);
    return 'applied';
  });
}
