// SIGTERM mid-stream: the relay stops claiming, finishes the batch it holds (published and
// marked, or handed back), closes its connections and exits 0 — leaving no row leased.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, statusCounts, topicPrefix } from './relayProcess.ts';

useLeakGuard();

const brokers = sharedKafkaBrokers();
const prefix = topicPrefix('relay-term');
let db: TestDatabase;
let client: pg.Client;
let relay: ServiceProcess | undefined;

beforeAll(async () => {
  db = await createOutboxDatabase('relay_term');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});

afterAll(async () => {
  await relay?.kill();
  await client?.end();
  await db?.drop();
});

describe('relay on SIGTERM', () => {
  it('finishes or hands back its batch, leaves nothing leased, and exits 0', {
    timeout: 60_000,
  }, async () => {
    relay = await startRelay('relay-term', {
      DATABASE_URL: db.url,
      KAFKA_BROKERS: brokers,
      KAFKA_TOPIC_PREFIX: prefix,
      RELAY_ID: 'relay-term',
      RELAY_BATCH_SIZE: '50',
    });
    await insertEvents(db.url, { count: 5000, aggregates: 500 });
    // Terminate while it is in the middle of the stream.
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(5)) {
      const counts = await statusCounts(db.url);
      if ((counts.published ?? 0) >= 200) break;
    }
    const exit = relay.exited();
    await relay.stop();
    expect(await exit).toEqual({ code: 0, signal: null });

    const counts = await statusCounts(db.url);
    expect(counts.in_flight ?? 0).toBe(0);
    expect(counts.published ?? 0).toBeGreaterThan(0);
    expect(counts.published ?? 0).toBeLessThan(5000);
    expect((counts.published ?? 0) + (counts.pending ?? 0)).toBe(5000);
  });
});
