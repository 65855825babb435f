import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fromKafkaMessage } from '@outbox/contracts';
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
import { Kafka, type KafkaMessage, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The CDC relay (docs/design.md#polling-or-cdc) puts on the wire what the polling relay puts there:
 * the same outbox rows, published by both into two topic prefixes, arrive with the same key,
 * partition, headers and JSON value, in the same order per key.
 */

// Needs wal_level=logical, which .ci/run turns on (scripts/postgres-logical-decoding.sh) before
// the tests; on a machine where it is off the test says so and skips rather than restarting a
// PostgreSQL that other tests are using.
const unavailable = await logicalDecodingUnavailable(testPostgresUrl);
if (unavailable) console.warn(`tests/cdc skipped: ${unavailable}`);

useLeakGuard();

const brokers = sharedKafkaBrokers();
const run = randomBytes(3).toString('hex');
const pollingPrefix = `cdc-polling-${run}.`;
const cdcPrefix = `cdc-debezium-${run}.`;
const partitions = 6;
const slot = `cdc_test_${run}`;
const publication = `cdc_test_${run}`;
const connectorName = `cdc-test-${run}`;
const untraced = 60;
const traced = 20;
const payments = 10;
const total = untraced + traced + payments;

let db: TestDatabase | undefined;
let connect: TestConnectWorker | undefined;
let relay: ServiceProcess | undefined;

beforeAll(async () => {
  if (unavailable) return;
  const started = Date.now();
  [db, connect] = await Promise.all([
    createOutboxDatabase('cdc_same_messages'),
    startTestConnectWorker('cdc-same-messages', brokers),
  ]);
  const workerReady = Date.now() - started;
  await registerOutboxConnector(connect.worker.url, connectorName, {
    databaseUrl: db.url,
    topicPrefix: cdcPrefix,
    topicPartitions: partitions,
    slotName: slot,
    publicationName: publication,
    serverName: `cdc-test-${run}`,
  });
  console.log(
    `Connect worker ready after ${workerReady} ms; connector running and its slot active after ${Date.now() - started} ms`,
  );
}, 180_000);

afterAll(async () => {
  await relay?.stop();
  if (connect) await deleteConnector(connect.worker.url, connectorName).catch(() => false);
  // The worker before the slot: once it is gone nothing holds the slot, whatever a failed test left.
  await connect?.dispose();
  if (db) {
    await dropReplicationSlot(db.url, slot);
    await dropPublication(db.url, publication);
  }
  await db?.drop();
  // With the connector's heartbeat topic (serverName below).
  if (!unavailable)
    await deleteTopicsWithPrefixes([pollingPrefix, cdcPrefix, `__debezium-heartbeat.cdc-test-${run}`]);
}, 120_000);

describe.skipIf(unavailable !== undefined)('the CDC relay and the polling relay', () => {
  it('publish every outbox row with the same key, partition, headers and value', {
    timeout: 120_000,
  }, async () => {
    if (!db) throw new Error('no database');
    await insertEvents(db.url, { count: untraced, aggregates: 12, aggregateIdPrefix: `order-${run}-` });
    await insertTracedEvents(db.url, traced);
    await insertEvents(db.url, {
      count: payments,
      aggregates: 3,
      aggregateIdPrefix: `payment-${run}-`,
      aggregateType: 'payment',
      eventType: 'PAYMENT_CAPTURED',
      payload: {
        amountCents: '1999',
        currency: 'EUR',
        captured: true,
        note: null,
        attempts: [1, 2],
        ratio: 0.25,
      },
    });

    relay = await startService(
      'relay',
      {
        DATABASE_URL: db.url,
        KAFKA_BROKERS: brokers.join(','),
        KAFKA_TOPIC_PREFIX: pollingPrefix,
        KAFKA_TOPIC_PARTITIONS: String(partitions),
      },
      { port: await freePort(), label: 'cdc-same-messages' },
    );

    const [polling, cdc] = await Promise.all([
      readMessages(brokers, [`${pollingPrefix}order.events`, `${pollingPrefix}payment.events`], total),
      readMessages(brokers, [`${cdcPrefix}order.events`, `${cdcPrefix}payment.events`], total),
    ]);

    expect(polling.size).toBe(total);
    expect(cdc.size).toBe(total);
    let tracedSeen = 0;
    for (const [id, polled] of polling) {
      const captured = cdc.get(id);
      if (polled.headers.traceparent) tracedSeen += 1;
      // An event stored without a trace: the polling relay leaves the trace headers out, the
      // router places the NULL column as headers without a value (docs/design.md#polling-or-cdc).
      const untraced: Record<string, null> = polled.headers.traceparent
        ? {}
        : { ce_traceparent: null, traceparent: null };
      const expected = { ...polled, headers: { ...polled.headers, ...untraced } };
      expect(wireView(captured, cdcPrefix), `event ${id}`).toEqual(wireView(expected, pollingPrefix));
      // What a consumer makes of it (packages/contracts) is the same event either way.
      expect(captured && fromKafkaMessage(captured.raw)).toEqual(fromKafkaMessage(polled.raw));
    }
    expect(tracedSeen).toBe(traced);
    expect(await (await fetch(`${relay.url}/healthz`)).json()).toMatchObject({ mode: 'polling' });
    expect(orderPerKey(cdc)).toEqual(orderPerKey(polling));
    const workerPid = connect?.worker.pid;
    if (workerPid !== undefined) console.log(`Connect worker resident memory: ${residentMb(workerPid)} MB`);
  });

  it('reads the WAL as outbox_cdc, a role with the outbox rights only, not as the superuser', async () => {
    if (!db) throw new Error('no database');
    const [reader] = await queryOnce<{ usename: string }>(
      db.url,
      `select a.usename from pg_replication_slots s join pg_stat_activity a on a.pid = s.active_pid
        where s.slot_name = $1`,
      [slot],
    );
    expect(reader?.usename).toBe('outbox_cdc');
    const [rights] = await queryOnce<Record<string, boolean>>(
      db.url,
      `select r.rolsuper as superuser, r.rolreplication as replication,
              has_table_privilege(r.rolname, 'outbox', 'select') as outbox_select,
              has_table_privilege(r.rolname, 'outbox', 'update') as outbox_update,
              has_column_privilege(r.rolname, 'outbox', 'attempts', 'update') as attempts_update,
              has_table_privilege(r.rolname, 'outbox', 'delete') as outbox_delete,
              has_table_privilege(r.rolname, 'processed_events', 'select') as other_select
         from pg_roles r where r.rolname = 'outbox_cdc'`,
    );
    expect(rights).toEqual({
      superuser: false,
      replication: true,
      outbox_select: true,
      // Debezium's heartbeat touches one column; nothing else of a row is the connector's to change.
      outbox_update: false,
      attempts_update: true,
      outbox_delete: false,
      other_select: false,
    });
  });

  it('keeps its replication slot, and the WAL from there on, after the connector is deleted', async () => {
    if (!db || !connect) throw new Error('no database or worker');
    expect(await deleteConnector(connect.worker.url, connectorName)).toBe(true);
    const before = await slotState(db.url);
    await insertEvents(db.url, { count: 50, aggregates: 5, aggregateIdPrefix: `after-${run}-` });
    const after = await slotState(db.url);
    // Nothing reads the slot any more, yet it stays, and the WAL it holds grows with every write
    // until someone drops it (dropReplicationSlot; afterAll does).
    expect(after.exists).toBe(true);
    expect(after.retainedBytes).toBeGreaterThan(before.retainedBytes);
  });
});

/** Whether the test's slot exists, and how many bytes of WAL it keeps the server from recycling. */
async function slotState(url: string): Promise<{ exists: boolean; retainedBytes: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ retained: string }>(
      `select pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::text as retained
         from pg_replication_slots where slot_name = $1`,
      [slot],
    );
    return { exists: rows.length === 1, retainedBytes: Number(rows[0]?.retained ?? 0) };
  } finally {
    await client.end();
  }
}

function residentMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/** Order events written the way writeEvent writes them under a span: with a stored traceparent. */
async function insertTracedEvents(url: string, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let n = 0; n < count; n++) {
      const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
      await client.query(
        `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers)
         values ($1, '/orders', 'order', $2, 'ORDER_CREATED', 1, $3::jsonb, $4::jsonb)`,
        [
          randomUUID(),
          `traced-${run}-${n % 5}`,
          JSON.stringify({
            orderId: randomUUID(),
            items: [{ sku: 'MS-202', quantity: 2 }],
            totalCents: '3998',
          }),
          JSON.stringify({ traceparent }),
        ],
      );
    }
  } finally {
    await client.end();
  }
}

type Received = {
  topic: string;
  partition: number;
  key: string | null;
  headers: Record<string, string | null>;
  value: string;
  /** Position on its partition, for the order per key. */
  offset: number;
  /** As kafkajs hands it to a consumer. */
  raw: Pick<KafkaMessage, 'headers' | 'value'>;
};

/** Every message of `topics` from the beginning, by ce_id, once `count` have arrived. */
async function readMessages(
  brokers: string[],
  topics: string[],
  count: number,
): Promise<Map<string, Received>> {
  const kafka = new Kafka({ clientId: 'cdc-test-reader', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    // The relays create their topics on their first event; wait for them.
    await eventually(
      `topics ${topics.join(', ')}`,
      async () => {
        const existing = new Set(await admin.listTopics());
        return topics.every((topic) => existing.has(topic)) ? true : undefined;
      },
      90_000,
    );
  } finally {
    await admin.disconnect();
  }
  const consumer = kafka.consumer({
    groupId: `cdc-test-${randomBytes(6).toString('hex')}`,
    maxWaitTimeInMs: 200,
  });
  const received = new Map<string, Received>();
  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        const headers: Record<string, string | null> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) {
          const first = Array.isArray(value) ? value[0] : value;
          headers[name] = first === undefined || first === null ? null : first.toString();
        }
        const id = headers.ce_id ?? `no-ce_id-${topic}-${partition}-${message.offset}`;
        received.set(id, {
          topic,
          partition,
          key: message.key?.toString() ?? null,
          headers,
          value: message.value?.toString() ?? '',
          offset: Number(message.offset),
          raw: { headers: message.headers, value: message.value },
        });
      },
    });
    await eventually(
      `${count} messages on ${topics.join(', ')}`,
      async () => (received.size >= count ? true : undefined),
      90_000,
    );
  } finally {
    await consumer.disconnect();
  }
  return received;
}

/** What must be the same on both sides: all but the topic's prefix and the offset. */
function wireView(message: Received | undefined, prefix: string) {
  if (!message) return undefined;
  const { offset: _offset, raw: _raw, topic, ...rest } = message;
  return { ...rest, topic: topic.slice(prefix.length) };
}

/** The ce_ids of each key, in the order a consumer reads them (offset order on the key's partition). */
function orderPerKey(messages: Map<string, Received>): Record<string, string[]> {
  const byKey: Record<string, [number, string][]> = {};
  for (const [id, message] of messages) {
    byKey[`${message.key}`] ??= [];
    byKey[`${message.key}`]?.push([message.offset, id]);
  }
  return Object.fromEntries(
    Object.entries(byKey).map(([key, list]) => [key, list.sort((a, b) => a[0] - b[0]).map(([, id]) => id)]),
  );
}

async function deleteTopicsWithPrefixes(prefixes: string[]): Promise<void> {
  const admin = new Kafka({ clientId: 'cdc-test-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((topic) => prefixes.some((p) => topic.startsWith(p)));
    if (topics.length > 0) await admin.deleteTopics({ topics });
  } finally {
    await admin.disconnect();
  }
}
