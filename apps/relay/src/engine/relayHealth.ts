import { backoffDelayMs } from '@outbox/runtime/backoff';
import type { Logger } from 'pino';

/** What a relay's loop says of itself on /healthz, in polling mode (the process shell adds its own fields). */
export type RelayHealth = {
  status: 'ok' | 'degraded';
  lastError?: string;
  lastPublishedAt?: string;
  published: number;
  deadLettered: number;
};

/**
 * A relay's health and its backoff after failures of its surroundings (database, broker), in one
 * place: each failure in a row doubles the wait (backoffDelayMs), and the first batch marked
 * published makes the relay healthy again and resets the count.
 */
export class RelayHealthTracker {
  readonly state: RelayHealth = { status: 'ok', published: 0, deadLettered: 0 };
  readonly #logger: Logger;
  #consecutiveFailures = 0;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** A failure of the relay's surroundings: say so on /healthz; returns how long to back off. */
  degraded(step: string, error: Error): number {
    this.#consecutiveFailures += 1;
    const retryInMs = Math.max(100, backoffDelayMs(this.#consecutiveFailures));
    this.state.status = 'degraded';
    this.state.lastError = `${step}: ${error.message}`;
    this.#logger.warn({ err: error, step, retryInMs }, 'relay step failed; backing off');
    return retryInMs;
  }

  /** Rows marked published: the broker and the database work again. */
  published(count: number): void {
    this.#consecutiveFailures = 0;
    this.state.status = 'ok';
    this.state.published += count;
    this.state.lastPublishedAt = new Date().toISOString();
  }

  deadLettered(count: number): void {
    this.state.deadLettered += count;
  }
}
