import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelayMs } from '@outbox/runtime/backoff';
import type { EventProducer } from '@outbox/runtime/kafka';
import type { Logger } from 'pino';
import type { ChunkHandler, ChunkItem, ChunkResult, Unreadable } from './chunk.ts';
import type { ConsumerMetrics } from './consumerMetrics.ts';
import { deadLetterTopic, toDeadLetterBatch, toDeadLetterMessage } from './deadLetter.ts';
import { classifyFailure, EventFailedError, type Failure } from './failure.ts';

export type ConsumerStats = {
  applied: number;
  duplicates: number;
  ignored: number;
  deadLettered: number;
};

/** A partition whose current chunk keeps failing (transiently) and is being retried. */
export type FailingPartition = {
  topic: string;
  partition: number;
  /** Failed attempts in a row at the same offset. */
  failures: number;
  /** When the first of them failed (ms since the epoch). */
  since: number;
  offset: string;
  reason: string;
};

export type Where = { topic: string; partition: number };

/**
 * The batch's controls (PartitionBatch): whether the partition is still this member's to work on,
 * and its heartbeat, which throws when the group rebalances (the client's member then rejoins).
 */
export type Control = { isRunning(): boolean; isStale(): boolean; heartbeat(): Promise<void> };

export type ChunkOutcomesDeps = {
  groupId: string;
  /** Sends the dead letters (the project's acknowledged producer). */
  producer: EventProducer;
  /** The dead-letter topics' partition counts. */
  deadLetterPartitions: Map<string, number>;
  handleChunk: ChunkHandler;
  logger: Logger;
  /** Backoff of a transiently failing chunk (full jitter). */
  retry: { baseMs: number; capMs: number };
  metrics?: Pick<ConsumerMetrics, 'onDeadLettered' | 'onRetry'> | undefined;
};

/**
 * What becomes of a chunk (failure.ts says why an attempt failed):
 * - committed: its events are counted, the partition is no longer failing;
 * - an event that fails the same way on every delivery (deterministic) goes to `<topic>.dlt`
 *   with the reason, alone, and the chunk is tried again without it; a deterministic failure
 *   that names no event makes the loop try the events one at a time to find it;
 * - any other failure rolled the chunk back: it is tried again, whole, after a backoff; nothing
 *   is skipped, and `failing()` reports the partition meanwhile.
 */
export class ChunkOutcomes {
  readonly stats: ConsumerStats = { applied: 0, duplicates: 0, ignored: 0, deadLettered: 0 };
  readonly #failing = new Map<string, FailingPartition>();
  readonly #deps: ChunkOutcomesDeps;

  constructor(deps: ChunkOutcomesDeps) {
    this.#deps = deps;
  }

  failing(): FailingPartition[] {
    return [...this.#failing.values()];
  }

  /** This process no longer retries the partition (stopped, or rebalanced away). */
  forget({ topic, partition }: Where): void {
    this.#failing.delete(`${topic}:${partition}`);
  }

  /** Apply `items` until each is applied or dead-lettered; false when the partition is no longer ours. */
  async settle(where: Where, items: ChunkItem[], control: Control): Promise<boolean> {
    let pending = items;
    let failures = 0;
    while (pending.length > 0) {
      if (!control.isRunning() || control.isStale()) return false;
      let results: ChunkResult[];
      try {
        results = await this.#deps.handleChunk(pending);
      } catch (err) {
        const index = err instanceof EventFailedError ? err.index : undefined;
        const failure = classifyFailure(err instanceof EventFailedError ? err.cause : err);
        if (failure.kind === 'transient') {
          failures += 1;
          await this.#retryLater(where, pending[index ?? 0] as ChunkItem, failures, failure, err);
          await control.heartbeat();
          continue;
        }
        if (index === undefined && pending.length > 1) return this.#oneAtATime(where, pending, control);
        const poison = pending[index ?? 0] as ChunkItem;
        await this.deadLetter(where, [{ message: poison.message, reason: failure.reason }]);
        pending = pending.filter((item) => item !== poison);
        continue;
      }
      this.#count(results);
      break;
    }
    this.forget(where);
    return true;
  }

  /**
   * In the log before the offset moves on (the acknowledged producer: every partition's ack
   * checked). A failed or uncertain send throws: the producer is replaced, the chunk's offsets are
   * not resolved, and the message comes again and is dead-lettered again (a duplicate in the DLT,
   * never a loss); so does a crash here.
   */
  async deadLetter({ topic, partition }: Where, letters: Unreadable[]): Promise<void> {
    if (letters.length === 0) return;
    const source = { topic, partition, consumer: this.#deps.groupId };
    const messages = letters.map(({ message, reason }) => toDeadLetterMessage(message, source, reason));
    await this.#deps.producer.send([
      toDeadLetterBatch(deadLetterTopic(topic), messages, this.#deps.deadLetterPartitions),
    ]);
    for (const { message, reason } of letters) {
      this.stats.deadLettered += 1;
      this.#deps.metrics?.onDeadLettered(topic);
      this.#deps.logger.warn({ topic, partition, offset: message.offset, reason }, 'message dead-lettered');
    }
  }

  /** A deterministic failure that names no event: each event on its own finds it. */
  async #oneAtATime(where: Where, items: ChunkItem[], control: Control): Promise<boolean> {
    for (const item of items) {
      if (!(await this.settle(where, [item], control))) return false;
    }
    return true;
  }

  async #retryLater(where: Where, at: ChunkItem, failures: number, failure: Failure, err: unknown) {
    const { topic, partition } = where;
    const { offset } = at.message;
    const key = `${topic}:${partition}`;
    const since = this.#failing.get(key)?.since ?? Date.now();
    this.#failing.set(key, { topic, partition, failures, since, offset, reason: failure.reason });
    this.#deps.metrics?.onRetry(topic, partition);
    const { baseMs, capMs } = this.#deps.retry;
    const delayMs = backoffDelayMs(failures, baseMs, capMs);
    this.#deps.logger.warn(
      { topic, partition, offset, failures, delayMs, err, reason: failure.reason },
      'chunk failed; rolled back, retrying',
    );
    await sleep(delayMs);
  }

  #count(results: ChunkResult[]): void {
    for (const result of results) {
      if (result === 'applied') this.stats.applied += 1;
      else if (result === 'duplicate') this.stats.duplicates += 1;
      else this.stats.ignored += 1;
    }
  }
}
