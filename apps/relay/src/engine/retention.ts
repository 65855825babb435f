import type { OutboxStore } from '@outbox/outbox';
import type { Logger } from 'pino';

const BATCH = 1000;

/**
 * Delete published events older than the retention, in bounded batches, every `intervalMs`.
 * Every relay runs it; `skip locked` in the delete keeps two relays from fighting over rows.
 */
export function startRetention(
  store: Pick<OutboxStore, 'deletePublished'>,
  logger: Logger,
  retentionHours: number,
  intervalMs = 60_000,
) {
  if (retentionHours <= 0) return { stop() {} };
  const retentionMs = retentionHours * 3_600_000;
  const sweep = async () => {
    let total = 0;
    for (let deleted = BATCH; deleted === BATCH; ) {
      deleted = await store.deletePublished(retentionMs, BATCH);
      total += deleted;
    }
    if (total > 0) logger.info({ deleted: total, retentionHours }, 'deleted published events past retention');
  };
  const timer = setInterval(() => {
    sweep().catch((err: unknown) => logger.warn({ err }, 'retention sweep failed; will try again'));
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
