import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { OUTBOX_SESSION_OPTIONS } from '@outbox/outbox';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import pg from 'pg';
import { pino } from 'pino';
import { createRelayMetrics, type RelayMetrics } from '../src/metrics.ts';
import { KafkaPublisher, type OutgoingEvent } from '../src/publisher.ts';
import { Relay, type RelayOptions } from '../src/relay.ts';
import { Wakeup } from '../src/wakeup.ts';
import { topicPrefix } from './relayProcess.ts';

/** Helpers shared by the relay's in-process tests (not a test file itself). */

export type InProcessRelay = {
  db: TestDatabase;
  pool: pg.Pool;
  relay: Relay;
  metrics: RelayMetrics;
  /** Runs around every real publish: a test can slow it down or act while the broker has it. */
  around: {
    before?: (events: OutgoingEvent[]) => Promise<void>;
    after?: (events: OutgoingEvent[]) => Promise<void>;
  };
  dispose(): Promise<void>;
};

/**
 * A Relay stepped by hand (`drainOnce`) on a database of its own, publishing with the real
 * KafkaPublisher to the real broker.
 */
export async function startInProcessRelay(
  label: string,
  brokers: string[],
  options: Partial<RelayOptions> = {},
): Promise<InProcessRelay> {
  const db = await createOutboxDatabase(label);
  // The relay's session settings, as apps/relay/src/main.ts sets them.
  const pool = new pg.Pool({ connectionString: db.url, max: 4, options: OUTBOX_SESSION_OPTIONS });
  const logger = pino({ level: 'silent' });
  const kafka = new KafkaPublisher({
    clientId: label,
    brokers,
    topicPrefix: topicPrefix(label),
    topicPartitions: 2,
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
  const metrics = createRelayMetrics(createMetricsRegistry(`${label}-test`), pool);
  const relay = new Relay({
    pool,
    publisher,
    wakeup: new Wakeup(db.url, logger), // never listens: the test steps the relay by hand
    logger,
    metrics,
    options: { id: label, batchSize: 10, leaseMs: 30_000, pollIntervalMs: 1000, maxAttempts: 10, ...options },
  });
  return {
    db,
    pool,
    relay,
    metrics,
    around,
    dispose: async () => {
      await kafka.disconnect();
      await pool.end();
      await db.drop();
    },
  };
}

/** A counter's value summed over its label sets. */
export async function counterTotal(metric: {
  get(): Promise<{ values: { value: number }[] }>;
}): Promise<number> {
  return (await metric.get()).values.reduce((sum, sample) => sum + sample.value, 0);
}
