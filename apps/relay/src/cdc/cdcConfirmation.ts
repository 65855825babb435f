import { setTimeout as sleep } from 'node:timers/promises';
import type { ConfirmationMark, OutboxStore } from '@outbox/outbox';
import type { Logger } from 'pino';
import type { Relay } from '../engine/relay.ts';
import { drainUpTo } from './cdcDrain.ts';

/** Rows a mark takes at most. */
const BATCH = 10_000;
/**
 * Marks waiting for the slot's confirmation at once, one taken a tick. The slot confirms only at
 * Connect's offset commits (`offset.flush.interval.ms`, a minute by default): with one mark
 * outstanding, marking could not outrun BATCH rows per commit, and above that rate `pending`
 * would grow for ever. With a tick a second, a minute's commits see 60 marks.
 */
const MAX_MARKS = 60;

/**
 * What keeps `status` true in debezium mode (docs/design.md#polling-or-cdc), one step a tick:
 *
 * 1. When a reader holds a slot that may be new (the relay's start, a slot re-created after a drop
 *    or a failover) and the slot is past its consistent point, drain: the polling path publishes
 *    every row still pending up to the last seq written (cdcDrain.ts). The connector streams only
 *    what commits after its slot's consistent point: duplicates, never a gap. A new reader of the
 *    same slot (a connector or Connect restart) needs no drain; the slot is known to be the same
 *    when it was seen at every check since the last drain and its restart_lsn is below the WAL
 *    position read at the previous check (a slot created since starts past it). Anything else
 *    counts as a new slot.
 * 2. Then, every tick: take a mark (pending rows above the drained seq, the WAL position after
 *    them, the reader) and mark those rows `published` once the same reader has confirmed that
 *    position; up to MAX_MARKS wait at once (packages/outbox/src/cdcStore.ts). Rows up to the drained seq stay the drain's: one
 *    pending there again was redriven (`failed` → `pending`, an UPDATE the connector does not
 *    route), so each tick drains them again before it marks. The PostgreSQL connector confirms
 *    the offsets Kafka Connect committed, and Connect commits an offset only below its oldest
 *    record Kafka has not acknowledged: a confirmed position never passes a record still being
 *    retried (docs/chaos.md, "A partition leader, then Connect").
 *
 * Nothing is marked while no reader holds the slot, and a mark whose reader has gone is dropped.
 */
type ConfirmationOptions = {
  store: OutboxStore;
  relay: Relay;
  slot: string;
  intervalMs: number;
  pollIntervalMs: number;
  logger: Logger;
  onMarked?: (count: number) => void;
  onDrained?: (count: number) => void;
  /** Rows a mark takes at most (default 10,000). */
  markBatchSize?: number;
};

export function startCdcConfirmation(options: ConfirmationOptions) {
  const stopped = new AbortController();
  const confirmation = new CdcConfirmation(options, stopped.signal);
  const loop = async () => {
    while (!stopped.signal.aborted) {
      await confirmation
        .tick()
        .catch((err: unknown) => options.logger.warn({ err }, 'CDC confirmation failed; will try again'));
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

class CdcConfirmation {
  readonly #options: ConfirmationOptions;
  readonly #stopped: AbortSignal;
  /**
   * The seq the slot seen at the last check was drained up to: rows up to it were written before
   * the slot could stream them, and are published by the drain. Undefined until it is drained.
   */
  #drainedUpTo: string | undefined;
  /** The reader seen at the last check, and the WAL position read just before it. */
  #lastReader: string | undefined;
  #since: string | undefined;
  /** Taken under the current reader, oldest first: their positions grow, so they confirm in order. */
  #marks: ConfirmationMark[] = [];
  /** The highest seq the marks taken so far reached: the next one starts above it. */
  #markedUpTo: string | undefined;
  /** Rows a mark takes at most. */
  readonly #batch: number;

  constructor(options: ConfirmationOptions, stopped: AbortSignal) {
    this.#options = options;
    this.#stopped = stopped;
    this.#batch = options.markBatchSize ?? BATCH;
  }

  async tick(): Promise<void> {
    const { store, slot } = this.#options;
    const seen = await store.readSlotReader(slot, this.#since);
    const { reader } = seen;
    // The same slot as at the last check: one walsender held it all along (a slot in use cannot be
    // dropped), or it starts below a position read then (a slot created since starts past it).
    const sameSlot =
      seen.exists && ((reader !== undefined && reader === this.#lastReader) || seen.existedAtSince);
    if (!sameSlot) this.#drainedUpTo = undefined;
    if (reader !== this.#lastReader) {
      this.#marks = [];
      this.#markedUpTo = undefined;
    }
    this.#lastReader = reader;
    this.#since = seen.exists ? seen.position : undefined;
    if (reader === undefined) return;
    if (this.#drainedUpTo === undefined) {
      await this.#drain(reader, seen.maxSeq);
      return;
    }
    await this.#drainRedriven(this.#drainedUpTo);
    await this.#markConfirmed(reader, this.#drainedUpTo);
  }

  async #drain(reader: string, maxSeq: string): Promise<void> {
    const { slot, logger } = this.#options;
    logger.info(
      { slot, reader, maxSeq },
      'a reader holds a slot that may be new: publishing the rows written before it',
    );
    const published = await drainUpTo({ ...this.#options, maxSeq, stopped: this.#stopped });
    this.#options.onDrained?.(published);
    logger.info({ slot, reader, drained: published }, 'rows written before the slot published');
    this.#drainedUpTo = maxSeq;
  }

  /** Rows up to the drained seq pending again (redriven dead letters): the slot never streams them. */
  async #drainRedriven(maxSeq: string): Promise<void> {
    const published = await drainUpTo({ ...this.#options, maxSeq, stopped: this.#stopped });
    if (published === 0) return;
    this.#options.onDrained?.(published);
    this.#options.logger.info({ drained: published, maxSeq }, 'redriven rows published by the drain');
  }

  /**
   * Marks the rows of every mark its reader has confirmed, oldest first, then takes the next mark.
   * A row that committed after the mark of its seq range was taken (a slow transaction) is in no
   * later mark, which starts above that range: each confirmed mark is followed by a sweep of its
   * range, a mark of what is still pending there.
   */
  async #markConfirmed(reader: string, drainedUpTo: string): Promise<void> {
    const { store, slot } = this.#options;
    for (let mark = this.#marks[0]; mark; mark = this.#marks[0]) {
      const marked = await store.markConfirmed(mark, slot);
      if (marked === undefined) break; // not confirmed yet: nor are the later ones
      this.#marks.shift();
      this.#options.onMarked?.(marked);
      if (mark.lastSeq !== undefined) await this.#take(reader, { after: drainedUpTo, upTo: mark.lastSeq });
    }
    if (this.#marks.length >= MAX_MARKS) return;
    const next = await this.#take(reader, { after: this.#markedUpTo ?? drainedUpTo });
    if (next?.lastSeq !== undefined) this.#markedUpTo = next.lastSeq;
  }

  async #take(
    reader: string,
    range: { after: string; upTo?: string },
  ): Promise<ConfirmationMark | undefined> {
    const next = await this.#options.store.takeConfirmationMark(this.#options.slot, this.#batch, range);
    if (next.reader !== reader || next.ids.length === 0) return undefined;
    this.#marks.push(next);
    return next;
  }
}
