import type { Logger } from 'pino';
import type { Prisma } from '../db.ts';

/** Keys deleted per statement: short transactions, so the delete never holds many locks at once. */
const BATCH = 1000;
/** How often the orders process looks for expired keys; the window is hours, so this is ample. */
export const RETENTION_INTERVAL_MS = 10 * 60_000;

const deleteExpired = `
  delete from idempotency_keys
  where key in (
    select key from idempotency_keys
    where created_at < now() - $1::float8 * interval '1 hour'
    order by created_at
    limit $2::int
  )`;

/**
 * Delete the idempotency keys older than the retention window, batch by batch. A client that
 * retries with an expired key gets a new order: the window must be longer than any client's
 * retries (docs/design.md#the-write-path). Returns how many keys were deleted.
 */
export async function deleteExpiredIdempotencyKeys(prisma: Prisma, retentionHours: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const count = await prisma.$executeRawUnsafe(deleteExpired, retentionHours, BATCH);
    deleted += count;
    if (count < BATCH) return deleted;
  }
}

export type RetentionOptions = {
  prisma: Prisma;
  logger: Logger;
  /** 0 keeps the keys for ever (no timer at all). */
  retentionHours: number;
  intervalMs?: number;
};

/**
 * Run deleteExpiredIdempotencyKeys now and then every `intervalMs` in the orders process. It is
 * orders' own table, so the orders process owns its cleanup (the relays' retention knows only
 * the shared outbox). A failure (the database away) is logged and retried at the next tick.
 */
export function startIdempotencyKeyRetention({
  prisma,
  logger,
  retentionHours,
  intervalMs = RETENTION_INTERVAL_MS,
}: RetentionOptions): { stop(): Promise<void> } {
  if (retentionHours === 0) return { stop: async () => {} };
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = deleteExpiredIdempotencyKeys(prisma, retentionHours).then(
      (deleted) => {
        if (deleted > 0) logger.info({ deleted, retentionHours }, 'expired idempotency keys deleted');
      },
      (err: unknown) => logger.warn({ err }, 'idempotency key retention failed; retrying at the next tick'),
    );
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
