// The naive write modes (src/demo/orderWriter.ts) exist to be broken on purpose, so they must be the
// real thing: the order committed without an outbox row, and ORDER_CREATED sent from the request
// as exactly the message the relay would publish (CloudEvents envelope and headers, key, topic), so
// inventory and billing read it unchanged. publish-then-commit's transaction failing after the send
// leaves what the chaos suite calls a ghost; the demo's switch needs its token.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { fromKafkaMessage, orderCreatedV1, toKafkaMessage } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import { Kafka, type KafkaMessage, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, listen } from '../src/app.ts';
import { createPrisma, migrate, type Prisma } from '../src/db.ts';
import { NaivePublisher } from '../src/demo/naivePublisher.ts';
import { OrderWriter, type WriteFaults } from '../src/demo/orderWriter.ts';
import { writeModeRouter } from '../src/demo/writeModeRouter.ts';
import { postOrder } from './support/ordersApi.ts';

useLeakGuard();

const TOKEN = `orders-${randomBytes(12).toString('hex')}`;
const order = { customerId: 'naive', currency: 'EUR', items: [{ sku: 'KB-101', quantity: 2 }] };

type Api = { baseUrl: string; writer: OrderWriter; close(): Promise<void> };

let db: TestDatabase;
let prisma: Prisma;
let publisher: NaivePublisher;
const topicPrefix = `naive-${randomBytes(3).toString('hex')}.`;

beforeAll(async () => {
  db = await createTestDatabase('orders_naive_writes');
  await migrate(db.url);
  prisma = createPrisma(db.url);
  publisher = new NaivePublisher({
    brokers: sharedKafkaBrokers(),
    topicPrefix,
    topicLayout: { partitions: 3 },
    logger: pino({ level: 'silent' }),
  });
});

afterAll(async () => {
  await publisher?.disconnect();
  await prisma?.$disconnect();
  await db?.drop();
});

async function startApi(faults: WriteFaults = {}, adminToken?: string): Promise<Api> {
  const writer = new OrderWriter({ prisma, publisher, faults });
  const logger = pino({ level: 'silent' });
  const app = createApp({
    prisma,
    logger,
    registry: createMetricsRegistry('orders-naive-test'),
    writer,
    ...(adminToken ? { admin: writeModeRouter(writer, adminToken, logger) } : {}),
  });
  const server = await listen(app, 0, '127.0.0.1');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    writer,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Every message on the orders topic so far, read from offset 0 by a group of its own. */
async function readOrderEvents(expected: number): Promise<KafkaMessage[]> {
  const kafka = new Kafka({
    clientId: 'naive-test',
    brokers: sharedKafkaBrokers(),
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({ groupId: `naive-test-${randomBytes(4).toString('hex')}` });
  const messages: KafkaMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: `${topicPrefix}order.events`, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${messages.length} of ${expected} messages after 30 s`)),
        30_000,
      );
      void consumer.run({
        eachMessage: async ({ message }) => {
          messages.push(message);
          if (messages.length >= expected) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return messages;
}

const outboxRows = async (orderId: string) =>
  (
    await queryOnce<{ n: number }>(db.url, 'select count(*)::int as n from outbox where aggregate_id = $1', [
      orderId,
    ])
  )[0]?.n;
const ordersWithId = async (orderId: string) =>
  (
    await queryOnce<{ n: number }>(db.url, 'select count(*)::int as n from orders where id = $1::uuid', [
      orderId,
    ])
  )[0]?.n;

describe('the naive write modes', () => {
  it('commit-then-publish commits the order without an outbox row and sends the ORDER_CREATED the relay would', async () => {
    const api = await startApi();
    try {
      api.writer.mode = 'commit-then-publish';
      const res = await postOrder(api.baseUrl, order);
      expect(res.status).toBe(201);
      const { id } = (await res.json()) as { id: string };
      expect(await ordersWithId(id)).toBe(1);
      expect(await outboxRows(id)).toBe(0);

      const [message] = await readOrderEvents(1);
      if (!message) throw new Error('no message');
      expect(message.key?.toString()).toBe(id);
      // What inventory and billing run on every message: it reads as the relay's would.
      const event = fromKafkaMessage(message);
      expect(event).toMatchObject({
        source: '/orders',
        type: 'ORDER_CREATED',
        subject: id,
        aggregatetype: 'order',
        schemaversion: 1,
      });
      expect(orderCreatedV1.parse(event.data)).toMatchObject({
        orderId: id,
        customerId: 'naive',
        totalCents: '17800',
      });
      // The same CloudEvents headers the relay's toKafkaMessage writes for that envelope.
      expect(Object.keys(message.headers ?? {}).sort()).toEqual(
        Object.keys(toKafkaMessage(event).headers ?? {}).sort(),
      );
    } finally {
      await api.close();
    }
  });

  it('publish-then-commit sends before COMMIT: a transaction failing after the send leaves an event for an order that does not exist', async () => {
    const api = await startApi({ failCommitEvery: 1 });
    try {
      api.writer.mode = 'publish-then-commit';
      const res = await postOrder(api.baseUrl, order);
      expect(res.status).toBe(500);
      // The first test's message and this one's; this one's order is the one that does not exist.
      const messages = await readOrderEvents(2);
      const missing: KafkaMessage[] = [];
      for (const message of messages)
        if ((await ordersWithId(message.key?.toString() ?? '')) === 0) missing.push(message);
      expect(missing).toHaveLength(1);
      const ghost = missing[0]?.key?.toString() ?? '';
      expect(fromKafkaMessage(missing[0] as KafkaMessage).type).toBe('ORDER_CREATED');
      expect(await ordersWithId(ghost)).toBe(0);
      expect(await outboxRows(ghost)).toBe(0);
    } finally {
      await api.close();
    }
  });

  it('switches only through PUT /admin/write-mode with the token, and has no such route without one', async () => {
    const put = (baseUrl: string, mode: string, token?: string) =>
      fetch(`${baseUrl}/admin/write-mode`, {
        method: 'PUT',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ mode }),
      });
    const healthMode = async (baseUrl: string) =>
      ((await (await fetch(`${baseUrl}/healthz`)).json()) as { writeMode: string }).writeMode;

    const demo = await startApi({}, TOKEN);
    const production = await startApi();
    try {
      expect(await healthMode(demo.baseUrl)).toBe('outbox');
      expect((await put(demo.baseUrl, 'commit-then-publish')).status).toBe(401);
      expect((await put(demo.baseUrl, 'commit-then-publish', 'x'.repeat(TOKEN.length))).status).toBe(401);
      expect((await put(demo.baseUrl, 'fire-and-forget', TOKEN)).status).toBe(400);
      expect(await healthMode(demo.baseUrl)).toBe('outbox');
      expect((await put(demo.baseUrl, 'commit-then-publish', TOKEN)).status).toBe(200);
      expect(await healthMode(demo.baseUrl)).toBe('commit-then-publish');

      expect((await put(production.baseUrl, 'commit-then-publish', TOKEN)).status).toBe(404);
      expect(await healthMode(production.baseUrl)).toBe('outbox');
    } finally {
      await demo.close();
      await production.close();
    }
  });
});
