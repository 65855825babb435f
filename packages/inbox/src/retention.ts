import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';
import type { Logger } from 'pino';

/**
 * Delete up to `limit` of this consumer's processed_events rows older than `retentionMs`.
 * Small batches keep each delete short; the caller repeats until fewer than `limit` come back.
 */
const deleteProcessedSql = `
  delete from processed_events
   where (consumer, event_id) in (
         select consumer, event_id
           from processed_events
          where consumer = $1
            and processed_at < now() - make_interval(secs => $2::bigint / 1000.0)
          limit $3
            for update skip locked)
  returning event_id`;

export async function deleteProcessed(
  db: SqlExecutor,
  consumer: string,
  retentionMs: number,
  limit: number,
): Promise<number> {
  const rows = await queryRows(db, deleteProcessedSql, [consumer, retentionMs, limit]);
  return rows.length;
}

const BATCH = 1000;

export type InboxRetentionOptions = {
  consumer: string;
  /** 0 keeps every row for ever. */
  retentionHours: number;
  /** Runs each batch in its own short transaction, e.g. `(work) => prisma.$transaction(work)`. */
  transaction: <T>(work: (tx: SqlExecutor) => Promise<T>) => Promise<T>;
  logger: Logger;
  intervalMs?: number;
};

/**
 * The inbox's memory of applied events must outlive every way an event can come back: a redelivery
 * after a crash (seconds), a relay re-publishing after a lease expired (minutes), a consumer group
 * re-reading what the topic still holds (the topic's retention, 7 days by default). A row deleted
 * after all of those can no longer meet its event again, so the table stops growing without giving
 * up exactly-once. The window is the operator's to choose (docs/design.md, "Retention of processed_events").
 */
export function startInboxRetention(options: InboxRetentionOptions): { stop(): void } {
  const { consumer, retentionHours, logger } = options;
  if (retentionHours <= 0) return { stop() {} };
  // A whole millisecond: hours in floating point (2.2 hours) would fail the bigint cast.
  const retentionMs = Math.round(retentionHours * 3_600_000);
  const sweep = async () => {
    let total = 0;
    for (let deleted = BATCH; deleted === BATCH; ) {
      deleted = await options.transaction((tx) => deleteProcessed(tx, consumer, retentionMs, BATCH));
      total += deleted;
    }
    if (total > 0) logger.info({ deleted: total, retentionHours }, 'deleted processed events past retention');
  };
  const timer = setInterval(() => {
    sweep().catch((err: unknown) => logger.warn({ err }, 'inbox retention sweep failed; will try again'));
  }, options.intervalMs ?? 60_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
