import { setTimeout as sleep } from 'node:timers/promises';
import { type ConfirmationMark, markConfirmed, readSlotReader, takeConfirmationMark } from '@outbox/outbox';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Relay } from '../polling/relay.ts';
import { drainUpTo } from './cdcDrain.ts';

const BATCH = 10_000;

/**
 * What keeps `status` true in debezium mode (docs/design.md#polling-or-cdc), one step a tick:
 *
 * 1. Each time another reader holds the slot (the relay's start, a connector restart, a slot
 *    re-created after a drop or a failover), drain: the polling path publishes every row still
 *    pending up to the last seq written (cdcDrain.ts). The connector streams only what commits
 *    after its slot exists, and the relay cannot tell a re-created slot from the old one read
 *    again, so it treats each new reader as a new slot: duplicates, never a gap.
 * 2. Then, a tick apart: take a mark (pending rows, the WAL position after them, the reader) and
 *    mark those rows `published` once the same reader has confirmed that position
 *    (packages/outbox/src/cdcStore.ts). Debezium confirms a position only after Kafka acknowledged
 *    what it published up to there.
 *
 * Nothing is marked while no reader holds the slot, and a mark whose reader has gone is dropped.
 */
export function startCdcConfirmation(options: {
  pool: pg.Pool;
  relay: Relay;
  slot: string;
  intervalMs: number;
  pollIntervalMs: number;
  logger: Logger;
  onMarked?: (count: number) => void;
  onDrained?: (count: number) => void;
}) {
  const { pool, slot, logger } = options;
  const stopped = new AbortController();
  /** The reader whose slot has been drained: marks are taken only under it. */
  let drainedFor: string | undefined;
  let mark: ConfirmationMark | undefined;

  const tick = async () => {
    const { reader, maxSeq } = await readSlotReader(pool, slot);
    if (reader === undefined) {
      mark = undefined;
      return;
    }
    if (reader !== drainedFor) {
      mark = undefined;
      logger.info(
        { slot, reader, maxSeq },
        'a new reader holds the slot: publishing the rows written before it',
      );
      const drained = await drainUpTo({ ...options, maxSeq, stopped: stopped.signal });
      options.onDrained?.(drained);
      logger.info({ slot, reader, drained }, 'rows written before the slot published');
      drainedFor = reader;
      return;
    }
    if (mark && mark.reader === reader && mark.ids.length > 0) {
      const marked = await markConfirmed(pool, mark, slot);
      if (marked === undefined) return; // not confirmed yet: the same mark next tick
      options.onMarked?.(marked);
    }
    mark = await takeConfirmationMark(pool, slot, BATCH);
    if (mark.reader !== drainedFor) mark = undefined;
  };

  const loop = async () => {
    while (!stopped.signal.aborted) {
      await tick().catch((err: unknown) => logger.warn({ err }, 'CDC confirmation failed; will try again'));
      await sleep(options.intervalMs, undefined, { signal: stopped.signal }).catch(() => {});
    }
  };
  const running = loop();
  return {
    stop: async () => {
      stopped.abort();
      await running;
    },
  };
}
