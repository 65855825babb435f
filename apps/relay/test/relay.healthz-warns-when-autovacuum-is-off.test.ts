// The polling relay's /healthz says when PostgreSQL runs with autovacuum off, as a warning beside
// its status (the relay works; its outbox keeps dead rows and stale statistics): whatever the
// server's setting, the answer matches it. This machine's server runs with it off.
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, topicPrefix } from './relayProcess.ts';

useLeakGuard();

let db: TestDatabase;
let relay: ServiceProcess | undefined;
beforeAll(async () => {
  db = await createOutboxDatabase('relay_healthz_autovacuum');
});
afterAll(async () => {
  await relay?.kill();
  await db?.drop();
});

describe('relay /healthz and autovacuum', () => {
  it('warns exactly when the server runs with autovacuum off', { timeout: 90_000 }, async () => {
    relay = await startRelay('relay-autovacuum', {
      DATABASE_URL: db.url,
      KAFKA_BROKERS: sharedKafkaBrokers(),
      KAFKA_TOPIC_PREFIX: topicPrefix('relay-autovacuum'),
      RELAY_ID: 'relay-autovacuum',
    });
    const [row] = await queryOnce<{ autovacuum: string }>(db.url, 'show autovacuum');
    const res = await fetch(`${relay.url}/healthz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; warnings?: string[] };
    if (row?.autovacuum === 'off') expect(body.warnings).toEqual([expect.stringMatching(/autovacuum off/)]);
    else expect(body.warnings).toBeUndefined();
  });
});
