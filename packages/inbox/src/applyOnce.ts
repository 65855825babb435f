import type { EventEnvelope } from '@outbox/contracts';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import { recordProcessed } from './dedup.ts';

export type ApplyResult = 'applied' | 'duplicate';

export type ApplyOnceOptions = {
  /**
   * Test-only fault point, default true. `false` (INBOX_DEDUP=off, refused when
   * NODE_ENV=production) still records the event but runs the effect even when it was applied
   * before: the bug this function exists to prevent, built on purpose so that the chaos suite can
   * show its invariant checker catches a double effect (docs/chaos.md).
   */
  dedup?: boolean;
};

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
  options: ApplyOnceOptions = {},
): Promise<ApplyResult> {
  return transaction(async (tx) => {
    const fresh = await recordProcessed(tx, consumer, [event]);
    if (fresh.size === 0 && options.dedup !== false) return 'duplicate';
    await effect(tx);
    return 'applied';
  });
}
