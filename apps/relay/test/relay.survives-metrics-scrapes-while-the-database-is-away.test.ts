// Prometheus scrapes every relay every 15 s, whatever state the database is in. The backlog gauges
// read the outbox table when scraped; when that read fails, /metrics must still answer (what is
// known, plus a scrape-error gauge) and the process must stay up: an ops endpoint never takes a
// process down.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseGate, startDatabaseGate } from './databaseGate.ts';
import { metricValue, relayHealth, startRelay, statusCounts, topicPrefix } from './relayProcess.ts';

useLeakGuard();

const brokers = sharedKafkaBrokers();
let db: TestDatabase;
let gate: DatabaseGate;
let relay: ServiceProcess | undefined;

beforeAll(async () => {
  db = await createOutboxDatabase('relay_scrape_db_away');
  gate = await startDatabaseGate(db.url);
});

afterAll(async () => {
  await relay?.kill();
  await gate?.close();
  await db?.drop();
});

describe('relay /metrics while PostgreSQL is unreachable', () => {
  it('answers every scrape, reports the failed read, stays up, and publishes again afterwards', {
    timeout: 90_000,
  }, async () => {
    relay = await startRelay('relay-scrape-db-away', {
      DATABASE_URL: gate.url,
      KAFKA_BROKERS: brokers,
      KAFKA_TOPIC_PREFIX: topicPrefix('relay-scrape'),
      RELAY_ID: 'relay-scrape',
      RELAY_POLL_INTERVAL_MS: '200',
    });
    let exitedEarly = false;
    void relay.exited().then(() => {
      exitedEarly = true;
    });
    expect(await metricValue(relay, 'outbox_metrics_scrape_errors_total')).toBe(0);

    gate.set('refuse');
    for (let scrape = 0; scrape < 5; scrape += 1) {
      const res = await fetch(`${relay.url}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('outbox_relay_batch_duration_seconds'); // the rest is still there
      await sleep(100);
    }
    expect(await metricValue(relay, 'outbox_metrics_scrape_errors_total')).toBeGreaterThan(0);
    expect((await fetch(`${relay.url}/healthz`)).status).toBe(200);
    const running = relay;
    await eventually(
      'the relay to report degraded',
      async () => ((await relayHealth(running)).status === 'degraded' ? true : undefined),
      20_000,
    );
    expect(exitedEarly).toBe(false);

    gate.set('open');
    await insertEvents(db.url, { count: 20, aggregates: 5 });
    await eventually(
      'the 20 events to be published',
      async () => ((await statusCounts(db.url)).published === 20 ? true : undefined),
      30_000,
    );
    expect(await metricValue(relay, 'outbox_events')).toBe(0);
    expect(exitedEarly).toBe(false);
  });
});
