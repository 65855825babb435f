import { setTimeout as sleep } from 'node:timers/promises';
import type { OutboxStore } from '@outbox/outbox';
import type { Logger } from 'pino';
import type { Relay } from '../engine/relay.ts';

/**
 * Publishes, with the relay engine's claim, publish and mark (engine/relay.ts), every row
 * written up to `maxSeq` that is still pending or in flight. Run once a reader holds the slot:
 * rows committed before the slot existed are not in its stream, rows committed after are. A row
 * gets its seq when it is inserted, before its commit, so a row above `maxSeq` was inserted after
 * the slot existed and is streamed; one at or below it is published here, and streamed too if it
 * committed after the slot was created (a duplicate, never a gap).
 *
 * Claims go in seq order, so the rows up to `maxSeq` go first; a claim may take a batch of later
 * rows with them (duplicates of streamed ones, at most one claim's worth per round, and one per poll
 * interval while the rows left up to `maxSeq` cannot be claimed). Resolves once none is left, or
 * when `stopped` aborts; a dead-lettered row (`failed`) is left to redrive.
 */
export async function drainUpTo(options: {
  store: Pick<OutboxStore, 'countUndrained'>;
  relay: Relay;
  maxSeq: string;
  pollIntervalMs: number;
  logger: Logger;
  stopped: AbortSignal;
}): Promise<number> {
  const { store, relay, maxSeq, logger, stopped } = options;
  let published = 0;
  let leftBefore = Number.POSITIVE_INFINITY;
  while (!stopped.aborted) {
    const left = await store.countUndrained(maxSeq);
    if (left === 0) return published;
    // The last claim took no row up to maxSeq (those left are leased by another relay, perhaps a
    // dead one, or wait out a retry's backoff), only later rows, which the slot streams anyway:
    // claiming again at once would re-send a batch of them each round until those rows come free.
    const stuck = left >= leftBefore;
    leftBefore = left;
    const step = await relay.drainOnce();
    published += step.claimed;
    // Nothing claimable now, nothing up to maxSeq claimed, or the broker failed: wait.
    const waitMs =
      step.retryInMs > 0 ? step.retryInMs : step.claimed === 0 || stuck ? options.pollIntervalMs : 0;
    if (waitMs > 0) {
      logger.debug({ left, waitMs }, 'CDC drain waits before claiming again');
      await sleep(waitMs, undefined, { signal: stopped }).catch(() => {});
    }
  }
  return published;
}
