// A database host that vanishes without closing connections (a dead VM, a firewall dropping
// packets) never answers: without client-side timeouts the relay's next query waits for ever and
// /healthz keeps saying ok. With them, the relay reports degraded, and recovers when the
// database answers again.
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseGate, startDatabaseGate } from './databaseGate.ts';
import { relayHealth, startRelay, statusCounts, topicPrefix } from './relayProcess.ts';

useLeakGuard();

const brokers = sharedKafkaBrokers();
let db: TestDatabase;
let gate: DatabaseGate;
let relay: ServiceProcess | undefined;

beforeAll(async () => {
  db = await createOutboxDatabase('relay_black_hole');
  gate = await startDatabaseGate(db.url);
});

afterAll(async () => {
  await relay?.kill();
  await gate?.close();
  await db?.drop();
});

describe('relay whose database stops answering', () => {
  it('reports degraded within its timeouts, then publishes again', { timeout: 90_000 }, async () => {
    relay = await startRelay('relay-black-hole', {
      DATABASE_URL: gate.url,
      KAFKA_BROKERS: brokers,
      KAFKA_TOPIC_PREFIX: topicPrefix('relay-black-hole'),
      RELAY_ID: 'relay-black-hole',
      RELAY_POLL_INTERVAL_MS: '200',
      RELAY_DB_TIMEOUT_MS: '2000',
    });
    const running = relay;
    expect((await relayHealth(running)).status).toBe('ok');

    gate.set('black-hole');
    await eventually(
      'the relay to report degraded',
      async () => ((await relayHealth(running)).status === 'degraded' ? true : undefined),
      30_000,
    );
    // /metrics answers meanwhile too (the backlog read times out instead of hanging the scrape).
    expect((await fetch(`${running.url}/metrics`, { signal: AbortSignal.timeout(15_000) })).status).toBe(200);

    gate.set('open');
    await insertEvents(db.url, { count: 10, aggregates: 10 });
    await eventually(
      'the 10 events to be published',
      async () => ((await statusCounts(db.url)).published === 10 ? true : undefined),
      45_000,
    );
    await eventually(
      'the relay to report ok again',
      async () => ((await relayHealth(running)).status === 'ok' ? true : undefined),
      15_000,
    );
  });
});
