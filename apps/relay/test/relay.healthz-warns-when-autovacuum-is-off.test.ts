// The relay's /healthz, polling or debezium mode, says when PostgreSQL runs with autovacuum off, as a warning beside
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
const relays: ServiceProcess[] = [];
beforeAll(async () => {
  db = await createOutboxDatabase('relay_healthz_autovacuum');
});
afterAll(async () => {
  await Promise.allSettled(relays.map((relay) => relay.kill()));
  await db?.drop();
});

async function warningsOn(relay: ServiceProcess): Promise<string[] | undefined> {
  const res = await fetch(`${relay.url}/healthz`);
  const body = (await res.json()) as { warnings?: string[] };
  return body.warnings;
}

async function expectWarningMatchesTheServer(relay: ServiceProcess): Promise<void> {
  const [row] = await queryOnce<{ autovacuum: string }>(db.url, 'show autovacuum');
  const warnings = await warningsOn(relay);
  if (row?.autovacuum === 'off') expect(warnings).toEqual([expect.stringMatching(/autovacuum off/)]);
  else expect(warnings).toBeUndefined();
}

describe('relay /healthz and autovacuum', () => {
  it('warns exactly when the server runs with autovacuum off', { timeout: 90_000 }, async () => {
    const relay = await startRelay('relay-autovacuum', {
      DATABASE_URL: db.url,
      KAFKA_BROKERS: sharedKafkaBrokers(),
      KAFKA_TOPIC_PREFIX: topicPrefix('relay-autovacuum'),
      RELAY_ID: 'relay-autovacuum',
    });
    relays.push(relay);
    const res = await fetch(`${relay.url}/healthz`);
    expect(res.status).toBe(200);
    await expectWarningMatchesTheServer(relay);
  });

  it('warns the same in debezium mode, whatever its connector is doing', { timeout: 90_000 }, async () => {
    // No Kafka Connect behind the URL: the connector's state is unknown, the warning is not.
    const relay = await startRelay('relay-autovacuum-cdc', {
      DATABASE_URL: db.url,
      KAFKA_BROKERS: sharedKafkaBrokers(),
      KAFKA_TOPIC_PREFIX: topicPrefix('relay-autovacuum-cdc'),
      RELAY_ID: 'relay-autovacuum-cdc',
      RELAY_MODE: 'debezium',
      RELAY_CONNECT_URL: 'http://127.0.0.1:9',
      RELAY_CONNECTOR: 'outbox-nowhere',
      RELAY_REPLICATION_SLOT: 'outbox_nowhere',
    });
    relays.push(relay);
    await expectWarningMatchesTheServer(relay);
  });
});
