import type { EventEnvelope } from '@outbox/contracts';
import { type BatchHandler, checkEventData, recordProcessed } from '@outbox/inbox';
import { writeEvents } from '@outbox/outbox';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';

// One event delivered by hand, for tests that drive a handler without Kafka: the same dedup write
// (recordProcessed) and the same reply write (writeEvents) as the consumer's chunk step, for a
// chunk of one. The consumer itself always goes through packages/inbox/src/applyChunk.ts.

type ApplyResult = 'applied' | 'duplicate';

/**
 * Apply an event's effect exactly once, however often it is delivered: its processed_events row
 * and the effect commit in ONE transaction; if the row already exists, nothing runs.
 * `transaction` is e.g. `(fn) => prisma.$transaction(fn)`.
 */
export async function applyOnce<Tx extends SqlExecutor>(
  transaction: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>,
  consumer: string,
  event: Pick<EventEnvelope, 'id' | 'type'>,
  effect: (tx: Tx) => Promise<void>,
): Promise<ApplyResult> {
  return transaction(async (tx) => {
    const fresh = await recordProcessed(tx, consumer, [event]);
    if (fresh.size === 0) return 'duplicate';
    await effect(tx);
    return 'applied';
  });
}

/**
 * A batch handler applied to ONE event in the caller's transaction, its data checked first and its
 * replies written to the outbox as the consumer does. The caller picks the handler of the event's
 * type, as the consumer would.
 */
export async function applyOne<Tx extends SqlExecutor, TData>(
  tx: Tx,
  source: string,
  handler: BatchHandler<Tx, TData>,
  event: EventEnvelope,
): Promise<string | undefined> {
  const [applied] = await handler.applyAll(tx, [checkEventData(event) as EventEnvelope<TData>]);
  await writeEvents(
    tx,
    source,
    (applied?.replies ?? []).map((reply) => ({ event: reply })),
  );
  return applied?.outcome;
}
