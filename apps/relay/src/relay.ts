import {
  backoffDelayMs,
  type ClaimedRow,
  claimBatch,
  markFailed,
  markPublished,
  renewLeases,
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
  /** The largest batch; under a backlog the claim grows to it (see #nextClaimSize). */
  batchSize: number;
  /** The smallest claim, when the outbox is quiet; defaults to batchSize (no adapting). */
  minBatchSize?: number;
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
 * while there is work (claiming the next batch while the broker has the previous one), sleep
 * until NOTIFY or the poll interval when there is none.
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
  #lastClaimed = 0;
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

  /**
   * Pipelined: the next batch is claimed while the previous one is with the broker, and published
   * as soon as the broker acknowledged the previous one. Order per aggregate is untouched: a claim
   * takes only the head event of each aggregate, and the previous batch's events are still heads
   * (in flight, leased) while it runs, so the next batch holds only *other* aggregates; an
   * aggregate's next event becomes claimable only once its previous one is marked published.
   * At most one batch is with the broker at a time, and one more is claimed.
   */
  async #loop(): Promise<void> {
    let delivering: Promise<Step> | undefined;
    while (!this.#stopping) {
      const claimed = await this.#claim(this.#nextClaimSize());
      if ('retryInMs' in claimed) {
        if (delivering) await delivering;
        delivering = undefined;
        await this.#wakeup.sleep(claimed.retryInMs);
        continue;
      }
      const previous = delivering ? await delivering : undefined;
      delivering = undefined;
      if (previous && previous.retryInMs > 0) {
        // The broker just failed the previous batch: give this one back untouched rather than
        // hold its leases through the backoff.
        await this.#giveBack(claimed.rows);
        await this.#wakeup.sleep(previous.retryInMs);
        continue;
      }
      if (claimed.rows.length === 0) {
        // Nothing claimable: sleep only when no batch was in flight either, because marking that
        // batch published may just have made its aggregates' next events claimable.
        if (!previous) await this.#wakeup.sleep(this.#options.pollIntervalMs);
        continue;
      }
      delivering = this.#deliver(claimed.rows);
    }
    if (delivering) await delivering;
  }

  /**
   * Claim size adapts to the traffic: twice what the last claim found, between the minimum and
   * the maximum. Quiet, claims stay small, so each batch goes out (and is acknowledged) at once;
   * under a backlog they double up to the maximum within a few claims, which is what throughput
   * needs. Figures in docs/benchmarks.md (relay).
   */
  #nextClaimSize(): number {
    const { batchSize, minBatchSize = batchSize } = this.#options;
    return Math.min(batchSize, Math.max(minBatchSize, this.#lastClaimed * 2));
  }

  /** Claim and publish one batch, without pipelining. Exposed for tests that step the relay by hand. */
  async drainOnce(): Promise<Step> {
    const claimed = await this.#claim(this.#options.batchSize);
    if ('retryInMs' in claimed) return { claimed: 0, retryInMs: claimed.retryInMs };
    if (claimed.rows.length === 0) return { claimed: 0, retryInMs: 0 };
    return this.#deliver(claimed.rows);
  }

  async #claim(limit: number): Promise<{ rows: ClaimedRow[] } | { retryInMs: number }> {
    const { id, leaseMs } = this.#options;
    let rows: ClaimedRow[];
    const claimTimer = this.#metrics.stepDuration.startTimer({ step: 'claim' });
    try {
      rows = await claimBatch(this.#pool, id, leaseMs, limit);
    } catch (err) {
      return { retryInMs: this.#degraded('claim', toError(err)) };
    } finally {
      claimTimer();
    }
    this.#lastClaimed = rows.length;
    const takeovers = rows.filter((row) => row.lease_expired).length;
    if (takeovers > 0) {
      this.#metrics.leaseTakeovers.inc(takeovers);
      this.#logger.warn(
        { count: takeovers },
        'took over events whose lease expired; they may be published twice',
      );
    }
    return { rows };
  }

  /** Hand claimed rows back without publishing them and without using up an attempt. */
  async #giveBack(rows: ClaimedRow[]): Promise<void> {
    if (rows.length === 0) return;
    await scheduleRetry(
      this.#pool,
      rows.map((row) => row.id),
      this.#options.id,
      {
        error: 'given back unpublished: the broker failed the batch before it',
        delayMs: 0,
        countAttempt: false,
      },
    ).catch(() => {}); // if this fails too, the leases expire and the rows are claimed again
  }

  /** Publish a claimed batch and mark it published; on failure, deal with each event by kind. */
  async #deliver(rows: ClaimedRow[]): Promise<Step> {
    const publishTimer = this.#metrics.stepDuration.startTimer({ step: 'publish' });
    const stopRenewing = this.#renewLeasesWhilePublishing(rows);
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
      stopRenewing();
      publishTimer();
    }
    await this.#published(rows);
    return { claimed: rows.length, retryInMs: 0 };
  }

  /**
   * A publish slower than a third of the lease (a slow broker, a long one-by-one retry) must not
   * let the lease run out under it: another relay would take the rows over and publish them a
   * second time. Renewal is fenced by owner like every other write, so a relay whose lease had
   * already been taken over cannot claw it back.
   */
  #renewLeasesWhilePublishing(rows: ClaimedRow[]): () => void {
    const { id, leaseMs } = this.#options;
    const ids = rows.map((row) => row.id);
    const timer = setInterval(
      () => {
        renewLeases(this.#pool, ids, id, leaseMs)
          .then((renewed) => {
            this.#metrics.leaseRenewals.inc();
            if (renewed < ids.length)
              this.#logger.warn(
                { lost: ids.length - renewed },
                'lease renewal found rows no longer ours; another relay may publish them too',
              );
          })
          .catch((err: unknown) => this.#logger.warn({ err }, 'lease renewal failed'));
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    return () => clearInterval(timer);
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
    let marked: Set<string>;
    try {
      // If this update is lost, the lease expires and the events are published again: a
      // duplicate, never a loss. Consumers deduplicate on the event id.
      marked = await markPublished(
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
    // Count only what this relay really marked: a row whose lease another relay took over is that
    // relay's to count (it publishes it again), or the totals of all relays would exceed the events.
    const fenced = rows.length - marked.size;
    if (fenced > 0) {
      this.#metrics.fencedOff.inc(fenced);
      this.#logger.warn({ count: fenced }, 'published events whose lease another relay had taken over');
    }
    const now = Date.now();
    for (const row of rows) {
      if (!marked.has(row.id)) continue;
      this.#metrics.published.inc({ event_type: row.event_type });
      this.#metrics.commitToPublish.observe({
        value: (now - row.created_at.getTime()) / 1000,
        exemplarLabels: exemplarOf(row.headers.traceparent),
      });
    }
    this.#logger.debug({ count: marked.size }, 'batch published');
    this.#consecutiveFailures = 0;
    this.health.status = 'ok';
    this.health.published += marked.size;
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
