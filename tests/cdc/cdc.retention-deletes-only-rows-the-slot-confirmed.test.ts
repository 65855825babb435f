import { randomBytes } from 'node:crypto';
import { registerOutboxConnector } from '@outbox/devstack/cdc-connector';
import { deleteConnector } from '@outbox/devstack/connect-rest';
import {
  dropPublication,
  dropReplicationSlot,
  logicalDecodingUnavailable,
} from '@outbox/devstack/logical-decoding';
import { freePort } from '@outbox/devstack/ports';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { startTestConnectWorker, type TestConnectWorker } from '@outbox/devstack/testing/test-connect-worker';
import { queryOnce, type TestDatabase, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import { markConfirmed, takeConfirmationMark } from '@outbox/outbox';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * In debezium mode the relay marks an outbox row published once the connector's replication slot
 * has confirmed it (apps/relay/src/cdc/cdcConfirmation.ts, docs/design.md#polling-or-cdc), and its
 * retention deletes published rows only; it reports the connector and the slot on /healthz and
 * /metrics. A real Kafka Connect worker with Debezium, a real slot: rows are deleted only once
 * they are on Kafka, and none while the connector is paused, however old.
 */

const unavailable = await logicalDecodingUnavailable(testPostgresUrl);
if (unavailable) console.warn(`tests/cdc skipped: ${unavailable}`);

useLeakGuard();

const brokers = sharedKafkaBrokers();
const run = randomBytes(3).toString('hex');
const prefix = `cdc-retention-${run}.`;
const topic = `${prefix}order.events`;
const slot = `cdc_retention_${run}`;
const publication = `cdc_retention_${run}`;
const connectorName = `cdc-retention-${run}`;

let db: TestDatabase | undefined;
let connect: TestConnectWorker | undefined;
let relay: ServiceProcess | undefined;

beforeAll(async () => {
  if (unavailable) return;
  [db, connect] = await Promise.all([
    createOutboxDatabase('cdc_retention'),
    startTestConnectWorker('cdc-retention', brokers),
  ]);
  await registerOutboxConnector(connect.worker.url, connectorName, {
    databaseUrl: db.url,
    topicPrefix: prefix,
    topicPartitions: 3,
    slotName: slot,
    publicationName: publication,
    serverName: connectorName,
  });
  relay = await startService(
    'relay',
    {
      DATABASE_URL: db.url,
      KAFKA_BROKERS: brokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      RELAY_MODE: 'debezium',
      RELAY_CONNECT_URL: connect.worker.url,
      RELAY_CONNECTOR: connectorName,
      RELAY_REPLICATION_SLOT: slot,
      // Rows older than 0.36 s, swept four times a second: the test waits on the slot, not the clock.
      RELAY_RETENTION_HOURS: '0.0001',
      RELAY_RETENTION_INTERVAL_MS: '250',
      RELAY_CDC_CONFIRM_INTERVAL_MS: '250',
    },
    { port: await freePort(), label: 'cdc-retention' },
  );
}, 180_000);

afterAll(async () => {
  await relay?.stop();
  if (connect) await deleteConnector(connect.worker.url, connectorName).catch(() => false);
  await connect?.dispose();
  if (db) {
    await dropReplicationSlot(db.url, slot);
    await dropPublication(db.url, publication);
  }
  await db?.drop();
  if (!unavailable) {
    await deleteTopic(topic);
    await deleteTopic(`__debezium-heartbeat.${connectorName}`); // the connector's heartbeats
  }
}, 120_000);

type Health = {
  status: string;
  connectorState?: string;
  slot?: { active: boolean; retainedWalBytes: number; unconfirmedWalBytes: number };
};

async function health(): Promise<Health> {
  if (!relay) throw new Error('no relay');
  return (await (await fetch(`${relay.url}/healthz`)).json()) as Health;
}

async function outboxIds(where = 'true'): Promise<Set<string>> {
  if (!db) throw new Error('no database');
  const rows = await queryOnce<{ id: string }>(db.url, `select id from outbox where ${where}`);
  return new Set(rows.map((row) => row.id));
}

/**
 * Waits for `done` while writing one event per check, as a live outbox does. Debezium confirms the
 * position of the last event it published (no heartbeat in packages/outbox/src/cdcConnector.ts), so a retention mark
 * is confirmed only once a write after it has been published (docs/design.md#polling-or-cdc).
 */
async function whileWriting(description: string, done: () => Promise<boolean>): Promise<void> {
  const url = db?.url ?? '';
  await eventually(
    description,
    async () => {
      if (await done()) return true;
      await insertEvents(url, { count: 1, aggregates: 1, aggregateIdPrefix: `trickle-${run}-` });
      return undefined;
    },
    90_000,
  );
}

async function connectorAction(action: 'pause' | 'resume'): Promise<void> {
  const res = await fetch(`${connect?.worker.url}/connectors/${connectorName}/${action}`, { method: 'PUT' });
  expect(res.status, `PUT ${action}`).toBe(202);
}

/** Waits until every one of `ids` is on the topic (its ce_id header). */
async function waitOnKafka(ids: Set<string>): Promise<void> {
  // Connect creates the topic with the first event it routes there.
  const admin = new Kafka({ clientId: 'cdc-retention-admin', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await eventually(
      `topic ${topic}`,
      async () => ((await admin.listTopics()).includes(topic) ? true : undefined),
      90_000,
    );
  } finally {
    await admin.disconnect();
  }
  await readTopic(brokers, topic, {
    until: (messages) => {
      const seen = new Set(messages.map((message) => message.eventId));
      return [...ids].every((id) => seen.has(id));
    },
    timeoutMs: 90_000,
  });
}

describe.skipIf(unavailable !== undefined)('the relay in debezium mode', () => {
  it('reports the running connector and the slot it reads on /healthz and /metrics', async () => {
    const body = await eventually('a healthy debezium relay', async () => {
      const current = await health();
      return current.status === 'ok' ? current : undefined;
    });
    expect(body).toMatchObject({ connectorState: 'RUNNING', slot: { active: true } });
    const metrics = await (await fetch(`${relay?.url}/metrics`)).text();
    expect(metrics).toMatch(/^outbox_cdc_connector_running\{[^}]*\} 1$/m);
    expect(metrics).toMatch(/^outbox_replication_slot_active\{[^}]*\} 1$/m);
    console.log(`slot of a running connector: ${JSON.stringify(body.slot)}`);
  });

  it('deletes rows once the slot has confirmed them, which is after they are on Kafka', {
    timeout: 120_000,
  }, async () => {
    if (!db) throw new Error('no database');
    await insertEvents(db.url, { count: 200, aggregates: 20, aggregateIdPrefix: `first-${run}-` });
    const first = await outboxIds();
    expect(first.size).toBe(200);
    await waitOnKafka(first);
    const started = Date.now();
    await whileWriting('the first 200 rows deleted', async () => {
      const left = await outboxIds();
      return [...first].every((id) => !left.has(id));
    });
    console.log(`first 200 rows deleted ${Date.now() - started} ms after all were on Kafka`);
    const confirmed = await eventually('the confirmations counted', async () => {
      const text = await (await fetch(`${relay?.url}/metrics`)).text();
      const value = Number(/^outbox_cdc_confirmed_total\{[^}]*\} (\d+)$/m.exec(text)?.[1] ?? 0);
      return value >= 200 ? value : undefined;
    });
    expect(confirmed).toBeGreaterThanOrEqual(200);
  });

  it('deletes nothing while the connector is paused, however old, and catches up on resume', {
    timeout: 180_000,
  }, async () => {
    if (!db) throw new Error('no database');
    await connectorAction('pause');
    // Connect pauses a source task by no longer polling it: the task keeps its replication
    // connection (the slot stays active) but reads nothing and confirms nothing.
    await eventually('the connector paused', async () => {
      const current = await health();
      return current.connectorState === 'PAUSED' ? current : undefined;
    });
    const before = await health();
    await insertEvents(db.url, { count: 2000, aggregates: 50, aggregateIdPrefix: `paused-${run}-` });
    const paused = await outboxIds(`aggregate_id like 'paused-${run}-%'`);
    expect(paused.size).toBe(2000);
    const held = await health();
    expect(held.status).toBe('degraded');
    // The relay's own step, run here where the test can see its answer: every row is pending,
    // yet the slot has not confirmed the position after them, so none is marked published.
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const mark = await takeConfirmationMark(pool, slot, 10_000, { after: '0' });
      expect([...paused].filter((id) => !mark.ids.includes(id))).toEqual([]);
      expect(await markConfirmed(pool, mark, slot)).toBeUndefined();
    } finally {
      await pool.end();
    }
    // And the relay, marking and sweeping four times a second all along, has marked and deleted none.
    const stillThere = await outboxIds(`status = 'pending'`);
    expect([...paused].filter((id) => !stillThere.has(id))).toEqual([]);
    console.log(
      `paused: 2000 events written, WAL held by the slot ${before.slot?.retainedWalBytes} -> ${held.slot?.retainedWalBytes} bytes, unconfirmed ${before.slot?.unconfirmedWalBytes} -> ${held.slot?.unconfirmedWalBytes} bytes`,
    );

    await connectorAction('resume');
    await waitOnKafka(paused);
    await whileWriting('the rows written while paused deleted', async () => {
      const left = await outboxIds();
      return [...paused].every((id) => !left.has(id));
    });
    const after = await eventually('a healthy relay again', async () => {
      const current = await health();
      return current.status === 'ok' ? current : undefined;
    });
    console.log(`after resume: ${JSON.stringify(after.slot)}`);
  });

  it('publishes and deletes the last rows of an outbox that then stays idle', {
    timeout: 120_000,
  }, async () => {
    if (!db) throw new Error('no database');
    await insertEvents(db.url, { count: 10, aggregates: 5, aggregateIdPrefix: `idle-${run}-` });
    const last = await outboxIds(`aggregate_id like 'idle-${run}-%'`);
    await waitOnKafka(last);
    const started = Date.now();
    // No write after them: the connector's heartbeat moves the slot's confirmed position past them.
    await eventually(
      'the idle outbox emptied',
      async () => {
        const left = await outboxIds();
        return [...last].some((id) => left.has(id)) ? undefined : true;
      },
      60_000,
    );
    console.log(`idle outbox: its last 10 rows deleted ${Date.now() - started} ms after all were on Kafka`);
  });
});

async function deleteTopic(name: string): Promise<void> {
  const admin = new Kafka({ clientId: 'cdc-retention-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    if ((await admin.listTopics()).includes(name)) await admin.deleteTopics({ topics: [name] });
  } finally {
    await admin.disconnect();
  }
}
