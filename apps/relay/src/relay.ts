import {
  backoffDelayMs,
  claimBatch,
  type EventEnvelope,
  markPublished,
  scheduleRetry,
  toEnvelope,
} from '@outbox/events';
import { toError } from '@outbox/service/errors';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Wakeup } from './wakeup.ts';

export type RelayOptions = {
  id: string;
  batchSize: number;
  leaseMs: number;
  pollIntervalMs: number;
};

export type Publisher = { publish(events: EventEnvelope[]): Promise<void> };

export type RelayHealth = {
  status: 'ok' | 'degraded';
  lastError?: string;
  lastPublishedAt?: string;
  published: number;
};

/**
 * The relay loop: claim a batch of due outbox rows, publish them, mark them published; repeat
 * while there is work, sleep until NOTIFY or the poll interval when there is none. A failed
 * publish gives the batch back with a backoff delay, so a broker outage costs no busy loop.
 */
export class Relay {
  readonly #pool: pg.Pool;
  readonly #publisher: Publisher;
  readonly #wakeup: Wakeup;
  readonly #logger: Logger;
  readonly #options: RelayOptions;
  #running: Promise<void> | undefined;
  #stopping = false;
  #consecutiveFailures = 0;
  readonly health: RelayHealth = { status: 'ok', published: 0 };

  constructor(pool: pg.Pool, publisher: Publisher, wakeup: Wakeup, logger: Logger, options: RelayOptions) {
    this.#pool = pool;
    this.#publisher = publisher;
    this.#wakeup = wakeup;
    this.#logger = logger;
    this.#options = options;
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  async #loop(): Promise<void> {
    while (!this.#stopping) {
      const { claimed, retryInMs } = await this.drainOnce();
      if (retryInMs > 0) await this.#wakeup.sleep(retryInMs);
      else if (claimed < this.#options.batchSize) await this.#wakeup.sleep(this.#options.pollIntervalMs);
    }
  }

  /** Claim and publish one batch. Exposed for tests that want to step the relay by hand. */
  async drainOnce(): Promise<{ claimed: number; retryInMs: number }> {
    const { id, leaseMs, batchSize } = this.#options;
    let rows: Awaited<ReturnType<typeof claimBatch>>;
    try {
      rows = await claimBatch(this.#pool, id, leaseMs, batchSize);
    } catch (err) {
      return { claimed: 0, retryInMs: this.#failed('claim', toError(err)) };
    }
    if (rows.length === 0) return { claimed: 0, retryInMs: 0 };

    const ids = rows.map((row) => row.id);
    try {
      await this.#publisher.publish(rows.map(toEnvelope));
    } catch (err) {
      const error = toError(err);
      const retryInMs = this.#failed('publish', error);
      // Best effort: if this fails too, the leases expire and the rows are claimed again anyway.
      await scheduleRetry(this.#pool, ids, id, error.message, retryInMs).catch(() => {});
      return { claimed: rows.length, retryInMs };
    }

    try {
      // Acknowledged by the broker; if this update is lost the lease expires and the batch is
      // published again: a duplicate, never a loss. Consumers deduplicate on the event id.
      await markPublished(this.#pool, ids, id);
    } catch (err) {
      return { claimed: rows.length, retryInMs: this.#failed('mark-published', toError(err)) };
    }
    this.#consecutiveFailures = 0;
    this.health.status = 'ok';
    this.health.published += rows.length;
    this.health.lastPublishedAt = new Date().toISOString();
    this.#logger.debug({ count: rows.length }, 'published batch');
    return { claimed: rows.length, retryInMs: 0 };
  }

  #failed(step: string, error: Error): number {
    this.#consecutiveFailures += 1;
    const retryInMs = Math.max(100, backoffDelayMs(this.#consecutiveFailures));
    this.health.status = 'degraded';
    this.health.lastError = `${step}: ${error.message}`;
    this.#logger.warn({ err: error, step, retryInMs }, 'relay step failed; backing off');
    return retryInMs;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wakeup.wake();
    await this.#running;
  }
}
