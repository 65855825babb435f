import { randomBytes } from 'node:crypto';
import { registerOutboxConnector } from '@outbox/devstack/cdc-connector';
import {
  connectorStatus,
  deleteConnector,
  resetConnectorOffsets,
  resumeConnector,
  stopConnector,
} from '@outbox/devstack/connect-rest';
import { waitForActiveSlot } from '@outbox/devstack/logical-decoding';
import { freePort } from '@outbox/devstack/ports';
import { type PostgresPair, startPostgresPair } from '@outbox/devstack/postgres-pair';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { insertEvents } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { startTestConnectWorker, type TestConnectWorker } from '@outbox/devstack/testing/test-connect-worker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { readTopic, type TopicMessage } from '@outbox/devstack/testing/topic-reader';
import { sharedMigrations } from '@outbox/inbox';
import { migrateDatabase } from '@outbox/runtime/migrate';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The outbox on a primary and an asynchronous streaming standby, published by Debezium through the
 * pair's endpoint and the relay in debezium mode. A kill -9 of the primary takes the logical slot
 * with it (PostgreSQL 15 keeps slots on the primary only); after the promotion the documented
 * recovery (docs/production.md#cdc-the-replication-slot-does-not-follow-the-promotion) brings the
 * connector back on a new slot, and every row the promoted primary holds reaches its topic: those
 * published before, those written while no slot existed, those written after. Rows the failover
 * lost and Debezium had already published (ghosts) are reported, not asserted: PostgreSQL 15 has no
 * guard against them short of synchronous replication.
 */

useLeakGuard();

const brokers = sharedKafkaBrokers();
const run = randomBytes(3).toString('hex');
const partitions = 3;
const prefix = `cdc-failover-${run}.`;
const topic = `${prefix}order.events`;
const slot = `cdc_failover_${run}`;
const connector = `cdc-failover-${run}`;
const publication = `cdc_failover_${run}`;

let pair: PostgresPair | undefined;
let connect: TestConnectWorker | undefined;
let relay: ServiceProcess | undefined;

afterAll(async () => {
  await relay?.stop().catch((err: unknown) => console.warn(err));
  if (connect) await deleteConnector(connect.worker.url, connector).catch(() => false);
  await connect?.dispose();
  await pair?.remove();
  for (const name of [topic, `__debezium-heartbeat.${connector}`]) {
    await deleteTopic(name).catch((err: unknown) => console.warn(err));
  }
}, 180_000);

describe('CDC through a database failover', { timeout: 300_000 }, () => {
  it('resumes on a new slot after the promotion and publishes every row the new primary holds', async () => {
    // The pair and the Connect worker start side by side: both take tens of seconds on a loaded machine.
    const [started, worker] = await Promise.all([
      startPostgresPair({ label: 'cdc-failover' }),
      startTestConnectWorker('cdc-failover', brokers),
    ]);
    pair = started;
    connect = worker;
    const adminUrl = new URL(started.url);
    await queryOnce(started.url, 'create database outbox');
    adminUrl.pathname = '/outbox';
    const dbUrl = adminUrl.toString();
    await migrateDatabase(dbUrl, [sharedMigrations]);

    await registerOutboxConnector(worker.worker.url, connector, {
      databaseUrl: dbUrl,
      topicPrefix: prefix,
      topicPartitions: partitions,
      slotName: slot,
      publicationName: publication,
      serverName: connector,
    });
    relay = await startService(
      'relay',
      {
        DATABASE_URL: dbUrl,
        KAFKA_BROKERS: brokers.join(','),
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_TOPIC_PARTITIONS: String(partitions),
        RELAY_MODE: 'debezium',
        RELAY_CONNECT_URL: worker.worker.url,
        RELAY_CONNECTOR: connector,
        RELAY_REPLICATION_SLOT: slot,
        RELAY_CDC_CONFIRM_INTERVAL_MS: '200',
      },
      { port: await freePort(), label: 'cdc-failover-relay' },
    );

    await insertEvents(dbUrl, { count: 20, aggregates: 5, aggregateIdPrefix: `before-${run}-` });
    const before = await ids(dbUrl);
    await onKafka(before);

    // Every commit from here on is on the primary only: lost in the failover. Debezium streams
    // them regardless, so each one it publishes before the kill is a ghost.
    await started.pauseReceipt();
    await insertEvents(dbUrl, { count: 10, aggregates: 5, aggregateIdPrefix: `lost-${run}-` });
    const lost = (await ids(dbUrl)).filter((id) => !before.includes(id));
    await onKafka(lost, 30_000).catch(() => undefined);

    await started.killPrimary();
    await started.promote();
    const [slots] = await queryOnce<{ n: number }>(
      dbUrl,
      'select count(*)::int as n from pg_replication_slots where slot_name = $1',
      [slot],
    );
    expect(slots?.n, 'the logical slot on the promoted standby').toBe(0);

    // Written on the promoted primary while no slot exists: never in any slot's stream.
    await insertEvents(dbUrl, { count: 20, aggregates: 5, aggregateIdPrefix: `between-${run}-` });
    // Debezium reconnects through the endpoint, finds its saved position absent from the promoted
    // primary, and its task fails: nothing resumes by itself.
    const failed = await eventually(
      'the connector task to fail on the promoted primary',
      async () => {
        const task = (await connectorStatus(worker.worker.url, connector))?.tasks[0] as
          | { state: string; trace?: string }
          | undefined;
        return task?.state === 'FAILED' ? task : undefined;
      },
      120_000,
    );
    expect(failed.trace).toContain('no longer available on the server');

    // The documented recovery: stop, reset the offsets (the old slot's position does not exist on
    // the new timeline), resume; the connector creates its slot on the promoted primary.
    await stopConnector(worker.worker.url, connector);
    await resetConnectorOffsets(worker.worker.url, connector);
    await resumeConnector(worker.worker.url, connector);
    await waitForActiveSlot(dbUrl, slot, 120_000);
    await insertEvents(dbUrl, { count: 10, aggregates: 5, aggregateIdPrefix: `after-${run}-` });

    const survivors = await ids(dbUrl);
    expect(
      survivors.filter((id) => lost.includes(id)),
      'rows the failover lost',
    ).toEqual([]);
    expect(survivors).toHaveLength(20 + 20 + 10);
    const messages = await onKafka(survivors, 180_000);
    const counts = new Map<string, number>();
    for (const { eventId } of messages) if (eventId) counts.set(eventId, (counts.get(eventId) ?? 0) + 1);
    const ghosts = lost.filter((id) => counts.has(id));
    const twice = survivors.filter((id) => (counts.get(id) ?? 0) > 1);
    console.log(
      `CDC failover: ${survivors.length} rows on the promoted primary, all on Kafka; ` +
        `${lost.length} lost in the failover, ${ghosts.length} of them published (ghosts); ` +
        `${twice.length} surviving rows published more than once`,
    );
    expect(
      survivors.filter((id) => !counts.has(id)),
      'rows stranded',
    ).toEqual([]);
  });
});

async function ids(url: string): Promise<string[]> {
  const rows = await queryOnce<{ id: string }>(url, 'select id from outbox order by seq');
  return rows.map((row) => row.id);
}

/** Waits until every one of `wanted` is on the topic; resolves with every message read. */
async function onKafka(wanted: string[], timeoutMs = 120_000): Promise<TopicMessage[]> {
  const admin = new Kafka({ clientId: 'cdc-failover-admin', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await eventually(
      `topic ${topic}`,
      async () => ((await admin.listTopics()).includes(topic) ? true : undefined),
      timeoutMs,
    );
  } finally {
    await admin.disconnect();
  }
  return readTopic(brokers, topic, {
    until: (messages) => {
      const seen = new Set(messages.map((message) => message.eventId));
      return wanted.every((id) => seen.has(id));
    },
    timeoutMs,
  });
}

async function deleteTopic(name: string): Promise<void> {
  const admin = new Kafka({ clientId: 'cdc-failover-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    if ((await admin.listTopics()).includes(name)) await admin.deleteTopics({ topics: [name] });
  } finally {
    await admin.disconnect();
  }
}
