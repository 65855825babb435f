import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { createOutboxStore, OUTBOX_SESSION_OPTIONS, type OutboxStore } from '@outbox/outbox';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import type { StandbyWait } from '@outbox/runtime/standby-wait';
import pg from 'pg';
import { type Logger, pino } from 'pino';
import { markWithNextClaimMs } from '../src/config.ts';
import { createRelayMetrics, type RelayMetrics } from '../src/engine/metrics.ts';
import { KafkaPublisher, type OutgoingEvent } from '../src/engine/publisher.ts';
import { Relay, type RelayOptions } from '../src/engine/relay.ts';
import { Wakeup } from '../src/engine/wakeup.ts';
import { NotifyListener } from '../src/polling/notifyListener.ts';
import { topicPrefix } from './relayProcess.ts';

/** Helpers shared by the relay's in-process tests (not a test file itself). */

export type InProcessRelay = {
  db: TestDatabase;
  pool: pg.Pool;
  /** The relay's outbox store, on `pool`. */
  store: OutboxStore;
  relay: Relay;
  wakeup: Wakeup;
  /** Not listening unless the test calls `listener.listen()`: it steps the relay or lets it poll. */
  listener: NotifyListener;
  metrics: RelayMetrics;
  /** Runs around every real publish: a test can slow it down or act while the broker has it. */
  around: {
    before?: (events: OutgoingEvent[]) => Promise<void>;
    after?: (events: OutgoingEvent[]) => Promise<void>;
  };
  dispose(): Promise<void>;
};

export type InProcessOptions = Partial<RelayOptions> & {
  /** Another relay's database: both then drain one outbox. Default: a fresh database of its own. */
  db?: TestDatabase;
  /** Default: the test's own topic prefix, derived from the label. */
  topicPrefix?: string;
  /** Publish only what the database's standby holds (DATABASE_WAIT_FOR_STANDBY). */
  standbyWait?: StandbyWait;
  logger?: Logger;
};

/**
 * A Relay on a database of its own (or another relay's), publishing with the real KafkaPublisher
 * to the real broker; tests step it by hand (`drainOnce`) or start its loop.
 */
export async function startInProcessRelay(
  label: string,
  brokers: string[],
  {
    db: shared,
    topicPrefix: prefix,
    logger = pino({ level: 'silent' }),
    standbyWait,
    ...options
  }: InProcessOptions = {},
): Promise<InProcessRelay> {
  const db = shared ?? (await createOutboxDatabase(label));
  // The relay's session settings, as apps/relay/src/main.ts sets them.
  const pool = new pg.Pool({ connectionString: db.url, max: 4, options: OUTBOX_SESSION_OPTIONS });
  const kafka = new KafkaPublisher({
    clientId: label,
    brokers,
    topicPrefix: prefix ?? topicPrefix(label),
    topicLayout: { partitions: 2 },
    logger,
  });
  const around: InProcessRelay['around'] = {};
  const publisher = {
    publish: async (events: OutgoingEvent[]) => {
      await around.before?.(events);
      await kafka.publish(events);
      await around.after?.(events);
    },
  };
  const store = createOutboxStore(pool);
  const metrics = createRelayMetrics(createMetricsRegistry(`${label}-test`), store);
  const wakeup = new Wakeup();
  const listener = new NotifyListener(db.url, wakeup, logger);
  const leaseMs = options.leaseMs ?? 30_000;
  const relay = new Relay({
    store,
    publisher,
    wakeup,
    logger,
    metrics,
    ...(standbyWait ? { standbyWait } : {}),
    // The production default for the mark with the next claim (config.ts), so the tests cover what runs.
    options: {
      id: label,
      batchSize: 10,
      leaseMs,
      pollIntervalMs: 1000,
      markWithNextClaimMs: markWithNextClaimMs({ RELAY_LEASE_MS: leaseMs }),
      maxAttempts: 10,
      ...options,
    },
  });
  return {
    db,
    pool,
    store,
    relay,
    wakeup,
    listener,
    metrics,
    around,
    dispose: async () => {
      await relay.stop();
      await listener.close();
      await kafka.disconnect();
      await pool.end();
      if (!shared) await db.drop();
    },
  };
}

/** A counter's value summed over its label sets. */
export async function counterTotal(metric: {
  get(): Promise<{ values: { value: number }[] }>;
}): Promise<number> {
  return (await metric.get()).values.reduce((sum, sample) => sum + sample.value, 0);
}
