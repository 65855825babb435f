import { randomBytes } from 'node:crypto';
import { registerOutboxConnector } from '@outbox/devstack/cdc-connector';
import {
  deleteConnector,
  resetConnectorOffsets,
  resumeConnector,
  retireConnector,
  stopConnector,
} from '@outbox/devstack/connect-rest';
import {
  dropPublication,
  dropReplicationSlot,
  logicalDecodingUnavailable,
  waitForActiveSlot,
} from '@outbox/devstack/logical-decoding';
import { freePort } from '@outbox/devstack/ports';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { startTestConnectWorker, type TestConnectWorker } from '@outbox/devstack/testing/test-connect-worker';
import { queryOnce, type TestDatabase, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { readTopic, type TopicMessage } from '@outbox/devstack/testing/topic-reader';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Every committed outbox row reaches its topic whichever relay carries it and whenever it changes
 * (docs/design.md#polling-or-cdc): rows a polling relay left pending when the outbox switches to
 * debezium, rows written before the connector's replication slot exists, rows written while a
 * dropped slot is re-created, and, back in polling mode, nothing lost and only the tail the slot
 * had not confirmed sent again. One real Kafka Connect worker with Debezium for the file; each case
 * its own database, slot, connector and topic prefix.
 */

const unavailable = await logicalDecodingUnavailable(testPostgresUrl);
if (unavailable) console.warn(`tests/cdc skipped: ${unavailable}`);

useLeakGuard();

const brokers = sharedKafkaBrokers();
const run = randomBytes(3).toString('hex');
const partitions = 3;

let connect: TestConnectWorker | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  if (unavailable) return;
  connect = await startTestConnectWorker('cdc-strands', brokers);
}, 180_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => console.warn(err));
  await connect?.dispose();
}, 180_000);

type Case = {
  db: TestDatabase;
  prefix: string;
  topic: string;
  slot: string;
  connector: string;
  publication: string;
};

/** A database, and the names of its slot, connector and topic; all removed after the file. */
async function newCase(label: string): Promise<Case> {
  const db = await createOutboxDatabase(`cdc_strand_${label}`);
  const names = {
    db,
    prefix: `cdc-strand-${run}-${label}.`,
    topic: `cdc-strand-${run}-${label}.order.events`,
    slot: `cdc_strand_${run}_${label}`,
    connector: `cdc-strand-${run}-${label}`,
    publication: `cdc_strand_${run}_${label}`,
  };
  cleanups.push(async () => {
    if (connect) await deleteConnector(connect.worker.url, names.connector).catch(() => false);
    await dropReplicationSlot(db.url, names.slot);
    await dropPublication(db.url, names.publication);
    await db.drop();
    await deleteTopic(names.topic);
    await deleteTopic(`__debezium-heartbeat.${names.connector}`);
  });
  return names;
}

async function registerConnector(c: Case): Promise<void> {
  if (!connect) throw new Error('no Connect worker');
  await registerOutboxConnector(connect.worker.url, c.connector, {
    databaseUrl: c.db.url,
    topicPrefix: c.prefix,
    topicPartitions: partitions,
    slotName: c.slot,
    publicationName: c.publication,
    serverName: c.connector,
  });
}

/** Retires the connector and drops its slot, as the demo does when a service goes back to polling. */
async function removeConnectorAndSlot(c: Case): Promise<void> {
  if (!connect) throw new Error('no Connect worker');
  await retireConnector(connect.worker.url, c.connector);
  await dropReplicationSlot(c.db.url, c.slot);
}

async function startRelay(c: Case, mode: 'polling' | 'debezium'): Promise<ServiceProcess> {
  const relay = await startService(
    'relay',
    {
      DATABASE_URL: c.db.url,
      KAFKA_BROKERS: brokers.join(','),
      KAFKA_TOPIC_PREFIX: c.prefix,
      KAFKA_TOPIC_PARTITIONS: String(partitions),
      RELAY_MODE: mode,
      ...(mode === 'debezium'
        ? {
            RELAY_CONNECT_URL: connect?.worker.url ?? '',
            RELAY_CONNECTOR: c.connector,
            RELAY_REPLICATION_SLOT: c.slot,
            RELAY_CDC_CONFIRM_INTERVAL_MS: '200',
          }
        : {}),
    },
    { port: await freePort(), label: `cdc-strands-${mode}` },
  );
  cleanups.push(() => relay.stop());
  return relay;
}

async function ids(c: Case, where = 'true'): Promise<string[]> {
  const rows = await queryOnce<{ id: string }>(c.db.url, `select id from outbox where ${where} order by seq`);
  return rows.map((row) => row.id);
}

/** Waits until every one of `wanted` is on the case's topic; resolves with every message read. */
async function onKafka(c: Case, wanted: string[], timeoutMs = 120_000): Promise<TopicMessage[]> {
  const admin = new Kafka({ clientId: 'cdc-strands-admin', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await eventually(
      `topic ${c.topic}`,
      async () => ((await admin.listTopics()).includes(c.topic) ? true : undefined),
      timeoutMs,
    );
  } finally {
    await admin.disconnect();
  }
  return readTopic(brokers, c.topic, {
    until: (messages) => {
      const seen = new Set(messages.map((message) => message.eventId));
      return wanted.every((id) => seen.has(id));
    },
    timeoutMs,
  });
}

function copies(messages: TopicMessage[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { eventId } of messages) if (eventId) counts.set(eventId, (counts.get(eventId) ?? 0) + 1);
  return counts;
}

describe.skipIf(unavailable !== undefined)('no outbox row is stranded', { timeout: 300_000 }, () => {
  it('when an outbox with pending rows switches from polling to debezium', async () => {
    const c = await newCase('a');
    // Written while the polling relay was stopped: pending, before any slot.
    await insertEvents(c.db.url, { count: 20, aggregates: 5, aggregateIdPrefix: `before-${run}-` });
    await registerConnector(c);
    await startRelay(c, 'debezium');
    await insertEvents(c.db.url, { count: 5, aggregates: 5, aggregateIdPrefix: `after-${run}-` });
    const all = await ids(c);
    expect(all).toHaveLength(25);
    await onKafka(c, all);
  });

  it('when rows are written before the connector has created its slot', async () => {
    const c = await newCase('b');
    // The relay runs first, as with compose, where the API takes orders before the connector is registered.
    await startRelay(c, 'debezium');
    await insertEvents(c.db.url, { count: 20, aggregates: 5, aggregateIdPrefix: `early-${run}-` });
    await registerConnector(c);
    await insertEvents(c.db.url, { count: 5, aggregates: 5, aggregateIdPrefix: `late-${run}-` });
    const all = await ids(c);
    expect(all).toHaveLength(25);
    await onKafka(c, all);
  });

  it('when the slot is dropped and re-created, even with rows the old slot never confirmed', async () => {
    const c = await newCase('c');
    await registerConnector(c);
    await startRelay(c, 'debezium');
    await insertEvents(c.db.url, { count: 10, aggregates: 5, aggregateIdPrefix: `first-${run}-` });
    await onKafka(c, await ids(c));
    // Paused, the task holds the slot and confirms nothing: these rows are older than the relay's
    // next confirmation marks, which a re-created slot would pass at once.
    await connectorAction(c, 'pause');
    await eventually('the connector paused', async () => {
      const res = await fetch(`${connect?.worker.url}/connectors/${c.connector}/status`);
      const body = (await res.json()) as { connector: { state: string } };
      return body.connector.state === 'PAUSED' ? true : undefined;
    });
    await insertEvents(c.db.url, { count: 20, aggregates: 5, aggregateIdPrefix: `unread-${run}-` });
    // What an operator does when a slot is lost (a failover) or dropped: the connector stopped, a
    // new slot, its offsets reset, or Debezium refuses the position the old slot had.
    const url = connect?.worker.url ?? '';
    await stopConnector(url, c.connector);
    await dropReplicationSlot(c.db.url, c.slot);
    await insertEvents(c.db.url, { count: 10, aggregates: 5, aggregateIdPrefix: `between-${run}-` });
    await resetConnectorOffsets(url, c.connector);
    await resumeConnector(url, c.connector);
    await waitForActiveSlot(c.db.url, c.slot);
    await insertEvents(c.db.url, { count: 5, aggregates: 5, aggregateIdPrefix: `after-${run}-` });
    const all = await ids(c);
    expect(all).toHaveLength(45);
    await onKafka(c, all);
  });

  it('when the outbox switches from debezium back to polling: nothing lost, only the unconfirmed tail sent again', async () => {
    const c = await newCase('d');
    await registerConnector(c);
    const cdcRelay = await startRelay(c, 'debezium');
    await insertEvents(c.db.url, { count: 200, aggregates: 20, aggregateIdPrefix: `cdc-${run}-` });
    const confirmed = await ids(c);
    await onKafka(c, confirmed);
    // Debezium confirms the position of the last event it published: a later write moves it past these.
    await eventually(
      'the 200 rows marked published once the slot confirmed them',
      async () => {
        const pending = await ids(
          c,
          `status <> 'published' and id = any('{${confirmed.join(',')}}'::uuid[])`,
        );
        if (pending.length === 0) return true;
        await insertEvents(c.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: `trickle-${run}-` });
        return undefined;
      },
      120_000,
    );
    await cdcRelay.stop();
    await removeConnectorAndSlot(c);
    const tail = await ids(c, `status <> 'published'`);
    await startRelay(c, 'polling');
    await insertEvents(c.db.url, { count: 10, aggregates: 5, aggregateIdPrefix: `polled-${run}-` });
    const all = await ids(c);
    const messages = await onKafka(c, all);
    const counts = copies(messages);
    const sentTwice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    console.log(
      `debezium -> polling: ${all.length} rows, ${tail.length} unconfirmed at the switch, ${sentTwice.length} sent twice`,
    );
    expect(confirmed.filter((id) => (counts.get(id) ?? 0) !== 1)).toEqual([]);
    expect(sentTwice.every((id) => tail.includes(id))).toBe(true);
  });
});

async function connectorAction(c: Case, action: 'pause' | 'resume'): Promise<void> {
  const res = await fetch(`${connect?.worker.url}/connectors/${c.connector}/${action}`, { method: 'PUT' });
  expect(res.status, `PUT ${action}`).toBe(202);
}

async function deleteTopic(name: string): Promise<void> {
  const admin = new Kafka({ clientId: 'cdc-strands-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    if ((await admin.listTopics()).includes(name)) await admin.deleteTopics({ topics: [name] });
  } finally {
    await admin.disconnect();
  }
}
