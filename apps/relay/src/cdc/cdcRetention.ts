import { type CdcRetentionMark, cdcRetentionCandidates, deleteReadByReplicationSlot } from '@outbox/outbox';
import type pg from 'pg';
import type { Logger } from 'pino';

const BATCH = 10_000;

/**
 * Retention in debezium mode (docs/design.md#polling-or-cdc). Nothing marks a row published, so
 * rows are deleted by what PostgreSQL knows the connector has read, in two steps a sweep apart:
 *
 * 1. mark: the rows older than the retention, and the WAL insert position read after them in the
 *    same statement. They were committed before that position (outboxStore.ts, cdcRetentionCandidates).
 * 2. delete: those rows, in one statement that also checks that the slot's confirmed_flush_lsn has
 *    reached the mark's position. Until it has (Connect down, connector paused or failed), nothing
 *    is deleted and the mark waits for the next sweep.
 *
 * A row is thus deleted only after the connector confirmed the transaction that wrote it, and
 * Debezium confirms a position only once Kafka acknowledged what it published from there. The
 * delete itself is in the WAL too; the connector skips it (`skipped.operations`, packages/outbox/src/cdcConnector.ts).
 */
export function startCdcRetention(options: {
  pool: pg.Pool;
  slot: string;
  retentionHours: number;
  intervalMs: number;
  logger: Logger;
  onDeleted?: (count: number) => void;
}) {
  const { pool, slot, retentionHours, logger } = options;
  if (retentionHours <= 0) return { stop() {}, sweep: async () => {} };
  const retentionMs = retentionHours * 3_600_000;
  let mark: CdcRetentionMark | undefined;
  let running: Promise<void> | undefined;

  const sweepOnce = async () => {
    if (mark && mark.ids.length > 0) {
      const deleted = await deleteReadByReplicationSlot(pool, mark, slot);
      if (deleted === undefined) {
        logger.debug({ slot, lsn: mark.lsn }, 'retention waits for the replication slot to confirm its mark');
        return;
      }
      options.onDeleted?.(deleted);
      if (deleted > 0)
        logger.info({ deleted, slot, lsn: mark.lsn }, 'deleted outbox rows the slot confirmed');
    }
    mark = await cdcRetentionCandidates(pool, retentionMs, BATCH);
  };
  /** One sweep; a sweep already under way is joined, not doubled. */
  const sweep = () => {
    running ??= sweepOnce().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => {
    sweep().catch((err: unknown) => logger.warn({ err }, 'CDC retention sweep failed; will try again'));
  }, options.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer), sweep };
}
