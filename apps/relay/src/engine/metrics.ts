import type { OutboxStats, OutboxStore } from '@outbox/outbox';
import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Publisher } from './publisher.ts';

export type RelayMetrics = ReturnType<typeof createRelayMetrics>;

/**
 * The relay's metrics. Labels stay low-cardinality: event type, failure kind, step — never an
 * event or aggregate id. The backlog gauges are read from the outbox table when Prometheus
 * scrapes, so they show the backlog even while publishing is stuck.
 *
 * When that read fails (the database is restarting or unreachable) the scrape still answers: the
 * backlog gauges keep their last values, `outbox_metrics_scrape_errors_total` counts the failure
 * and `outbox_stats_last_success_timestamp_seconds` says how old those values are. A throwing
 * collect() would fail the whole scrape, and once crashed every relay a database restart.
 */
export function createRelayMetrics(
  registry: MetricsRegistry,
  store: Pick<OutboxStore, 'outboxStats'>,
  logger?: Logger,
) {
  const registers = [registry];
  const scrapeErrors = new Counter({
    name: 'outbox_metrics_scrape_errors_total',
    help: 'Scrapes whose outbox read failed; the backlog gauges then show their last values.',
    registers,
  });
  const lastSuccess = new Gauge({
    name: 'outbox_stats_last_success_timestamp_seconds',
    help: 'When the backlog gauges were last read from the outbox table (Unix time).',
    registers,
  });
  // Both backlog gauges come from one query per scrape: prom-client collects all metrics at once,
  // so the two collect() calls below start together and share the query in flight.
  let inFlight: Promise<OutboxStats | undefined> | undefined;
  const stats = () => {
    inFlight ??= store
      .outboxStats()
      .then((read) => {
        lastSuccess.set(Date.now() / 1000);
        return read;
      })
      .catch((err: unknown) => {
        scrapeErrors.inc();
        logger?.warn({ err }, 'outbox stats for /metrics failed; the backlog gauges keep their last values');
        return undefined;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
  const backlog = new Gauge({
    name: 'outbox_events',
    help: 'Outbox rows not yet published, by status (pending, in_flight, failed).',
    labelNames: ['status'],
    registers,
    async collect() {
      const read = await stats();
      if (read) for (const [status, count] of Object.entries(read.byStatus)) this.set({ status }, count);
    },
  });
  const oldestAge = new Gauge({
    name: 'outbox_oldest_unpublished_age_seconds',
    help: 'Age of the oldest event not yet published (pending or in flight); 0 when there is none.',
    registers,
    async collect() {
      const read = await stats();
      if (read) this.set(read.oldestUnpublishedSeconds);
    },
  });
  return {
    backlog,
    oldestAge,
    scrapeErrors,
    published: new Counter({
      name: 'outbox_published_total',
      help: 'Events published to Kafka and acknowledged by it.',
      labelNames: ['event_type'],
      registers,
    }),
    publishFailures: new Counter({
      name: 'outbox_publish_failures_total',
      help: 'Events whose publish failed, by kind: unavailable (broker), transient, permanent.',
      labelNames: ['event_type', 'reason'],
      registers,
    }),
    deadLettered: new Counter({
      name: 'outbox_dead_lettered_total',
      help: 'Events moved to status failed (dead-lettered) by this relay.',
      labelNames: ['event_type'],
      registers,
    }),
    leaseTakeovers: new Counter({
      name: 'outbox_relay_leases_expired_total',
      help: 'Events claimed from another relay whose lease had expired; each may be published twice.',
      registers,
    }),
    leaseRenewals: new Counter({
      name: 'outbox_relay_lease_renewals_total',
      help: 'Lease renewals of a batch whose publish took longer than a third of the lease.',
      registers,
    }),
    fencedOff: new Counter({
      name: 'outbox_relay_fenced_off_total',
      help: 'Events this relay published but could not mark: another relay had taken over their lease.',
      registers,
    }),
    stepDuration: new Histogram({
      name: 'outbox_relay_batch_duration_seconds',
      help: 'Duration of one relay step for one batch: claim, publish, mark.',
      labelNames: ['step'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    commitToPublish: new Histogram({
      name: 'outbox_commit_to_publish_seconds',
      help: 'From the event row being written to the broker acknowledging it.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
      // Each bucket keeps the trace id of its latest event: a link from the graph to a trace.
      enableExemplars: true,
    }),
  };
}

/** The steps outbox_relay_batch_duration_seconds times, by the port call that makes each. */
type Step = 'claim' | 'publish' | 'mark';

async function timed<T>(metrics: RelayMetrics, step: Step, call: () => Promise<T>): Promise<T> {
  const stop = metrics.stepDuration.startTimer({ step });
  try {
    return await call();
  } finally {
    stop();
  }
}

/**
 * The store with its claim (alone, or carrying the previous batch's mark) timed as the `claim` step
 * and its mark as `mark`; every other operation as it is.
 */
export function timedStore(store: OutboxStore, metrics: RelayMetrics): OutboxStore {
  return {
    ...store,
    claimBatch: (...args) => timed(metrics, 'claim', () => store.claimBatch(...args)),
    markAndClaim: (...args) => timed(metrics, 'claim', () => store.markAndClaim(...args)),
    markPublished: (...args) => timed(metrics, 'mark', () => store.markPublished(...args)),
  };
}

/** The publisher with each publish timed as the `publish` step. */
export function timedPublisher(publisher: Publisher, metrics: RelayMetrics): Publisher {
  return { publish: (events) => timed(metrics, 'publish', () => publisher.publish(events)) };
}
