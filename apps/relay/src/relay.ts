import {
  backoffDelayMs,
  type ClaimedRow,
  claimBatch,
  markFailed,
  markPublished,
  scheduleRetry,
} from '@outbox/events';
import { toError } from '@outbox/service/errors';
import { exemplarOf } from '@outbox/service/exemplars';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { RelayMetrics } from './metrics.ts';
import { classifyPublishError, type PublishFailureKind } from './publishErrors.ts';
import { type OutgoingEvent, toOutgoingEvent } from './publisher.ts';
import type { Wakeup } from './wakeup.ts';

export type RelayOptions = {
  id: string;
  batchSize: number;
  leaseMs: number;
  pollIntervalMs: number;
  /** Attempts before a transiently failing event is dead-lettered. */
  maxAttempts: number;
  /** Test-only fault point (RELAY_FAULT in config.ts); never set in production. */
  fault?: { crashAfterPublish: number };
};

/** Events are envelopes plus their stored baggage; the publisher traces each (docs/tracing.md). */
export type Publisher = { publish(events: OutgoingEvent[]): Promise<void> };

export type RelayHealth = {
  status: 'ok' | 'degraded';
  lastError?: string;
  lastPublishedAt?: string;
  published: number;
  deadLettered: number;
};

type Step = { claimed: number; retryInMs: number };

/** What every log line about one event says, so an operator can follow that event through the logs. */
function eventFields(row: ClaimedRow) {
  return { eventId: row.id, type: row.event_type, aggregateId: row.aggregate_id, attempt: row.attempts };
}

/**
 * The relay loop: claim a batch of due outbox rows, publish them, mark them published; repeat
 * while there is work, sleep until NOTIFY or the poll interval when there is none.
 *
 * When a publish fails, what happens depends on why (see publishErrors.ts): broker unavailable →
 * the batch goes back untouched and the relay backs off; otherwise the batch is retried one event
 * at a time, so one poison event is found and dealt with while the others go out.
 */
export class Relay {
  readonly #pool: pg.Pool;
  readonly #publisher: Publisher;
  readonly #wakeup: Wakeup;
  readonly #logger: Logger;
  readonly #metrics: RelayMetrics;
  readonly #options: RelayOptions;
  #running: Promise<void> | undefined;
  #stopping = false;
  #consecutiveFailures = 0;
  #acknowledgedBatches = 0;
  readonly health: RelayHealth = { status: 'ok', published: 0, deadLettered: 0 };

  constructor(deps: {
    pool: pg.Pool;
    publisher: Publisher;
    wakeup: Wakeup;
    logger: Logger;
    metrics: RelayMetrics;
    options: RelayOptions;
  }) {
    this.#pool = deps.pool;
    this.#publisher = deps.publisher;
    this.#wakeup = deps.wakeup;
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
    this.#options = deps.options;
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  async #loop(): Promise<void> {
    while (!this.#stopping) {
      const { claimed, retryInMs } = await this.drainOnce();
      // Sleep only when there was nothing to claim: a batch smaller than the batch size does not
      // mean the outbox is empty, because publishing it made each aggregate's next event claimable.
      if (retryInMs > 0) await this.#wakeup.sleep(retryInMs);
      else if (claimed === 0) await this.#wakeup.sleep(this.#options.pollIntervalMs);
    }
  }

  /** Claim and publish one batch. Exposed for tests that step the relay by hand. */
  async drainOnce(): Promise<Step> {
    const { id, leaseMs, batchSize } = this.#options;
    let rows: ClaimedRow[];
    const claimTimer = this.#metrics.stepDuration.startTimer({ step: 'claim' });
    try {
      rows = await claimBatch(this.#pool, id, leaseMs, batchSize);
    } catch (err) {
      return { claimed: 0, retryInMs: this.#degraded('claim', toError(err)) };
    } finally {
      claimTimer();
    }
    if (rows.length === 0) return { claimed: 0, retryInMs: 0 };
    const takeovers = rows.filter((row) => row.lease_expired).length;
    if (takeovers > 0) {
      this.#metrics.leaseTakeovers.inc(takeovers);
      this.#logger.warn(
        { count: takeovers },
        'took over events whose lease expired; they may be published twice',
      );
    }

    const publishTimer = this.#metrics.stepDuration.startTimer({ step: 'publish' });
    try {
      await this.#publisher.publish(rows.map(toOutgoingEvent));
    } catch (err) {
      const error = toError(err);
      const kind = classifyPublishError(error);
      if (kind === 'unavailable' || rows.length === 1) return this.#handleFailure(rows, kind, error);
      // Something in the batch was refused: find it by publishing one event at a time. Each
      // aggregate has at most one event in a batch, so this cannot reorder an aggregate.
      return this.#publishOneByOne(rows);
    } finally {
      publishTimer();
    }
    await this.#published(rows);
    return { claimed: rows.length, retryInMs: 0 };
  }

  async #publishOneByOne(rows: ClaimedRow[]): Promise<Step> {
    for (const [index, row] of rows.entries()) {
      try {
        await this.#publisher.publish([toOutgoingEvent(row)]);
      } catch (err) {
        const error = toError(err);
        const kind = classifyPublishError(error);
        if (kind === 'unavailable') return this.#handleFailure(rows.slice(index), kind, error);
        await this.#handleFailure([row], kind, error);
        continue;
      }
      await this.#published([row]);
    }
    return { claimed: rows.length, retryInMs: 0 };
  }

  /** Acknowledged by the broker: mark published (fenced by our lease). */
  async #published(rows: ClaimedRow[]): Promise<void> {
    // Test-only fault point: die between the broker's ack and the mark, the worst moment for a
    // relay to crash. The rows stay leased; after the lease another relay publishes them again.
    const fault = this.#options.fault;
    if (fault && ++this.#acknowledgedBatches >= fault.crashAfterPublish) {
      this.#logger.warn({ count: rows.length }, 'RELAY_FAULT: kill -9 after the broker ack, before marking');
      process.kill(process.pid, 'SIGKILL');
    }
    const markTimer = this.#metrics.stepDuration.startTimer({ step: 'mark' });
    try {
      // If this update is lost, the lease expires and the events are published again: a
      // duplicate, never a loss. Consumers deduplicate on the event id.
      await markPublished(
        this.#pool,
        rows.map((row) => row.id),
        this.#options.id,
      );
    } catch (err) {
      this.#degraded('mark-published', toError(err));
      return;
    } finally {
      markTimer();
    }
    const now = Date.now();
    for (const row of rows) {
      this.#metrics.published.inc({ event_type: row.event_type });
      this.#metrics.commitToPublish.observe({
        value: (now - row.created_at.getTime()) / 1000,
        exemplarLabels: exemplarOf(row.headers.traceparent),
      });
    }
    this.#consecutiveFailures = 0;
    this.health.status = 'ok';
    this.health.published += rows.length;
    this.health.lastPublishedAt = new Date(now).toISOString();
  }

  async #handleFailure(rows: ClaimedRow[], kind: PublishFailureKind, error: Error): Promise<Step> {
    for (const row of rows) this.#metrics.publishFailures.inc({ event_type: row.event_type, reason: kind });
    const ids = rows.map((row) => row.id);
    const owner = this.#options.id;

    if (kind === 'unavailable') {
      const retryInMs = this.#degraded('publish', error);
      // The events are fine; give them back without using up an attempt. If this update fails
      // too, the leases expire and the events are claimed again anyway.
      await scheduleRetry(this.#pool, ids, owner, {
        error: error.message,
        delayMs: retryInMs,
        countAttempt: false,
      }).catch(() => {});
      return { claimed: rows.length, retryInMs };
    }

    for (const row of rows) {
      if (kind === 'permanent' || row.attempts >= this.#options.maxAttempts) {
        const reason = `${kind === 'permanent' ? 'refused by the broker' : `failed ${row.attempts} attempts`}: ${error.message}`;
        if (await markFailed(this.#pool, row.id, owner, reason).catch(() => false)) {
          this.#metrics.deadLettered.inc({ event_type: row.event_type });
          this.health.deadLettered += 1;
          this.#logger.error({ ...eventFields(row), reason }, 'event dead-lettered');
        }
      } else {
        const delayMs = backoffDelayMs(row.attempts);
        await scheduleRetry(this.#pool, [row.id], owner, {
          error: error.message,
          delayMs,
          countAttempt: true,
        }).catch(() => {});
        this.#logger.warn({ ...eventFields(row), delayMs, err: error }, 'publish failed; will retry');
      }
    }
    return { claimed: rows.length, retryInMs: 0 };
  }

  /** A failure of the relay's surroundings (database, broker): back off, say so on /healthz. */
  #degraded(step: string, error: Error): number {
    this.#consecutiveFailures += 1;
    const retryInMs = Math.max(100, backoffDelayMs(this.#consecutiveFailures));
    this.health.status = 'degraded';
    this.health.lastError = `${step}: ${error.message}`;
    this.#logger.warn({ err: error, step, retryInMs }, 'relay step failed; backing off');
    return retryInMs;
  }

  /** Stop claiming; the batch in hand is finished (published, or given back) before this resolves. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wakeup.wake();
    await this.#running;
  }
}
