import type { PartitionBatch } from '@outbox/runtime/kafka';
import type { Logger } from 'pino';

/** How often a consumer commits its offsets unless told otherwise (runConsumer's commitIntervalMs). */
export const DEFAULT_COMMIT_INTERVAL_MS = 1000;

/**
 * The commit functions of a batch. They act on the member, not on the batch: they reach every
 * offset resolved in the group's current generation (a rebalance starts a new one and drops the
 * offsets of the partitions it took away), and commit with it.
 */
type Committer = Pick<PartitionBatch, 'commitOffsetsIfNecessary' | 'uncommittedOffsets'>;

/**
 * When the loop commits its offsets: every `intervalMs` while there is something new, not after
 * every chunk. Each commit is an OffsetCommit request the broker appends to __consumer_offsets;
 * at a low rate a chunk holds one event, so per-chunk commits were one request per event. Only
 * resolved offsets are committed, i.e. of chunks whose transaction committed; a crash redelivers
 * at most the last interval's events, which processed_events makes harmless (docs/design.md,
 * "The consumers"). Besides the timer, the loop commits on its way out: when it stops (before
 * the member leaves the group) and when a batch fails, a refused heartbeat of a rebalance included.
 */
export class OffsetCommits {
  #committer: Committer | undefined;
  #stopping = false;
  #inFlight = false;
  readonly #timer: NodeJS.Timeout;
  readonly #beforeCommit: (() => Promise<void>) | undefined;
  #failedOver = false;

  /**
   * `beforeCommit` runs before every commit and may refuse it by throwing: the offsets stay
   * uncommitted and a later commit takes them (kafkaLoop.ts's `untilStandbyHolds`). When it says
   * the database failed over (code FAILED_OVER), the offsets resolved since the last commit are
   * never committed: their effects may be gone with the old primary (see `failedOver`).
   */
  constructor(intervalMs: number, logger: Logger, beforeCommit?: () => Promise<void>) {
    this.#beforeCommit = beforeCommit;
    // The timer, not the chunks, drives the commits: an idle stream gets its last offsets
    // committed within an interval too, and consumer lag (read from committed offsets) drops to 0.
    this.#timer = setInterval(() => {
      if (this.#inFlight) return; // a slow coordinator: the next tick commits what this one would
      this.#inFlight = true;
      this.commitNow()
        .catch((err: unknown) => logger.warn({ err }, 'offset commit failed; the next interval retries'))
        .finally(() => {
          this.#inFlight = false;
        });
    }, intervalMs);
  }

  /** Called with each batch: a member restarted after a crash, or replaced, has new commit functions. */
  remember(payload: Committer): void {
    this.#committer = payload;
  }

  /**
   * After a chunk resolved its offsets: commits at once when the consumer is stopping (stop(), or
   * the client stopping it after a crash: `running` false), so the chunk is not redelivered.
   */
  async afterChunk(running: boolean): Promise<void> {
    if (this.#stopping || !running) await this.commitNow();
  }

  /**
   * Before the consumer disconnects: commit what is resolved, and from now on every chunk that
   * finishes commits its own offsets before its batch returns, so before the member leaves the
   * group (it waits for the batches in progress). kafkajs itself commits nothing on the way out when
   * autoCommit is off.
   */
  async stopping(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#timer);
    await this.commitNow();
  }

  /** Commit every resolved offset not committed yet: one OffsetCommit request, none when nothing moved. */
  async commitNow(): Promise<void> {
    const committer = this.#committer;
    if (!committer) return;
    const offsets = committer.uncommittedOffsets();
    if (offsets.topics.length === 0 || this.#failedOver) return;
    try {
      await this.#beforeCommit?.();
    } catch (err) {
      if ((err as { code?: unknown }).code === 'FAILED_OVER') this.#failedOver = true;
      throw err;
    }
    // With offsets given, both members commit them unconditionally (kafkajs's runner.js, lanes.ts).
    await committer.commitOffsetsIfNecessary(offsets);
  }

  /**
   * The database failed over since the last commit: the loop must read again from the committed
   * offsets (kafkaLoop.ts fails the batch, and the member reads again from them), so that every event whose effect
   * the failover lost is applied again; processed_events skips the others.
   */
  get failedOver(): boolean {
    return this.#failedOver;
  }

  /** The member was stopped, crashed or replaced: its commit functions are gone. */
  forget(): void {
    this.#committer = undefined;
    this.#failedOver = false;
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
