import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cdcNames, relayModes, startCdcRelays } from '../src/cdcRelays.ts';
import { connectorStatus } from '../src/connectRest.ts';
import type { ConnectWorker } from '../src/connectWorker.ts';
import { dropPublication, dropReplicationSlot, logicalDecodingUnavailable } from '../src/logicalDecoding.ts';
import { freePort } from '../src/ports.ts';
import { planStack } from '../src/stackPlan.ts';
import { useLeakGuard } from '../src/testing/leakGuard.ts';
import { createOutboxDatabase, insertEvents } from '../src/testing/outboxDatabase.ts';
import { eventually } from '../src/testing/stack.ts';
import { sharedKafkaBrokers } from '../src/testing/testBroker.ts';
import { type TestDatabase, testPostgresUrl } from '../src/testing/testDatabase.ts';

const hookTimeout = 180_000;

// Like tests/cdc: needs wal_level=logical (.ci/run turns it on), and says so when it is off.
const unavailable = await logicalDecodingUnavailable(testPostgresUrl);
if (unavailable) console.warn(`cdcRelays test skipped: ${unavailable}`);

useLeakGuard();

describe('RELAY_MODE and RELAY_MODE_<SERVICE>', () => {
  it('are polling unless set, one setting for all and one per service', () => {
    expect(relayModes({})).toEqual({ orders: 'polling', inventory: 'polling', billing: 'polling' });
    expect(relayModes({ RELAY_MODE: 'debezium', RELAY_MODE_BILLING: 'polling' })).toEqual({
      orders: 'debezium',
      inventory: 'debezium',
      billing: 'polling',
    });
  });

  it('refuse anything else, naming the variable', () => {
    expect(() => relayModes({ RELAY_MODE_ORDERS: 'cdc' })).toThrow(
      'RELAY_MODE_ORDERS=cdc: expected polling or debezium',
    );
  });

  it('reach each relay process as its RELAY_MODE, with the connector to report in debezium mode', () => {
    const url = 'postgresql://postgres@127.0.0.1:5432/x';
    const plans = planStack({
      databaseUrls: { orders: url, inventory: url, billing: url },
      kafkaBrokers: ['127.0.0.1:9092'],
      relayModes: { orders: 'debezium' },
      connectUrl: 'http://127.0.0.1:8083',
    });
    expect(plans['relay-orders'].env).toMatchObject({
      RELAY_MODE: 'debezium',
      RELAY_CONNECT_URL: 'http://127.0.0.1:8083',
      RELAY_CONNECTOR: 'outbox-orders',
      RELAY_REPLICATION_SLOT: 'outbox_orders',
    });
    expect(plans['relay-inventory'].env.RELAY_MODE).toBe('polling');
    expect(plans['relay-inventory'].env.RELAY_CONNECTOR).toBeUndefined();
  });
});

describe.skipIf(unavailable !== undefined)('startCdcRelays', () => {
  const brokers = sharedKafkaBrokers();
  const run = randomBytes(3).toString('hex');
  const prefix = `cdc-relays-${run}.`;
  const workerName = `cdc-relays-${process.pid}`;
  const { slot, publication, connector } = cdcNames('orders');
  const log: string[] = [];
  let db: TestDatabase | undefined;
  let worker: ConnectWorker | undefined;
  let connectPort: number;
  const start = (ordersMode: 'polling' | 'debezium') =>
    startCdcRelays({
      modes: { orders: ordersMode, inventory: 'polling', billing: 'polling' },
      // One database stands for all three: only orders' runs CDC.
      databaseUrls: { orders: db?.url ?? '', inventory: db?.url ?? '', billing: db?.url ?? '' },
      brokers,
      connectPort,
      workerName,
      topicPrefix: prefix,
      topicPartitions: 3,
      log: (message) => log.push(message),
    });

  beforeAll(async () => {
    db = await createOutboxDatabase('cdc_relays');
    connectPort = await freePort();
  }, hookTimeout);

  afterAll(async () => {
    // The worker first: once it is gone nothing holds the slot, whatever a failed test left.
    if (worker) {
      await worker.stop();
      rmSync(worker.dir, { recursive: true, force: true });
      await deleteTopics([...Object.values(worker.internalTopics)], prefix);
    }
    if (db) {
      await dropReplicationSlot(db.url, slot);
      await dropPublication(db.url, publication);
    }
    await db?.drop();
  }, hookTimeout);

  it('debezium: starts a worker and registers the service’s connector, which publishes its outbox', async () => {
    worker = await start('debezium');
    expect(worker).toBeDefined();
    expect((await connectorStatus(worker?.url ?? '', connector))?.connector.state).toBe('RUNNING');
    expect(log).toContain(`connect: connector ${connector} publishes the orders outbox (slot ${slot})`);
    await insertEvents(db?.url ?? '', { count: 5, aggregates: 2, aggregateIdPrefix: `cdc-relays-${run}-` });
    const count = await eventually(
      'the five events on the topic',
      async () => {
        const total = await messageCount(`${prefix}order.events`);
        return total >= 5 ? total : undefined;
      },
      60_000,
    );
    expect(count).toBe(5);
  });

  it('polling again: deletes the connector and drops its replication slot, saying so', async () => {
    await start('polling');
    expect(await connectorStatus(worker?.url ?? '', connector)).toBeUndefined();
    expect(log).toContain(`postgres: dropped replication slot ${slot} of an earlier run (orders now polls)`);
    const client = new pg.Client({ connectionString: db?.url });
    await client.connect();
    try {
      const { rowCount } = await client.query('select 1 from pg_replication_slots where slot_name = $1', [
        slot,
      ]);
      expect(rowCount).toBe(0);
    } finally {
      await client.end();
    }
  });

  async function messageCount(topic: string): Promise<number> {
    const admin = new Kafka({ clientId: 'cdc-relays-test', brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      if (!(await admin.listTopics()).includes(topic)) return 0;
      // The connector's first write creates the topic: until its partitions have leaders the
      // broker answers NOT_LEADER, which is "nothing yet", not a failure.
      const offsets = await admin.fetchTopicOffsets(topic).catch((error: unknown) => {
        if (isRetriable(error)) return [];
        throw error;
      });
      return offsets.reduce((sum, partition) => sum + Number(partition.high) - Number(partition.low), 0);
    } finally {
      await admin.disconnect();
    }
  }

  async function deleteTopics(topics: string[], withPrefix: string): Promise<void> {
    const admin = new Kafka({ clientId: 'cdc-relays-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const existing = await admin.listTopics();
      const ours = existing.filter((topic) => topics.includes(topic) || topic.startsWith(withPrefix));
      if (ours.length > 0) await admin.deleteTopics({ topics: ours });
    } finally {
      await admin.disconnect();
    }
  }
});

function isRetriable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { retriable?: unknown }).retriable === true;
}
