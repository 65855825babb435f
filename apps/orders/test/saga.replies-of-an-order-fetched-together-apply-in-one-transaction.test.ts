// Inventory's and billing's replies about one order come on two topics, so the Kafka loop gets them
// as batches of two partitions. Applied each in its own transaction, they locked the same order
// twice, one after the other. With the orders service's chunk linger (KAFKA_CHUNK_LINGER_MS, its
// default), the chunks that arrive together are applied in ONE transaction: every order's two
// replies carry the same transaction id (xmin of their order_history rows), and the order is
// confirmed once. (The linger is on as shipped; the test widens its window.) Through the real consumer loop of each Kafka client, the shared broker and a
// migrated orders database.
import { randomBytes, randomUUID } from 'node:crypto';
import { type EventEnvelope, PAYMENT_AUTHORIZED, STOCK_RESERVED, toKafkaMessage } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { type EventConsumer, startEventConsumer } from '@outbox/inbox';
import { createPool, transactionOn } from '@outbox/runtime/database';
import { defaultDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import type { KafkaClientName } from '@outbox/runtime/kafka';
import { createKafka } from '@outbox/runtime/kafka/kafkajs';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../src/config.ts';
import { EVENT_SOURCE } from '../src/orders/createOrder.ts';
import { replyHandlers } from '../src/saga/replyHandlers.ts';
import { type OrdersApi, postOrder, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

const ORDERS = 12;
const TEST_LINGER_MS = 1_000;
const PARTITIONS = 6;

let api: OrdersApi;
let pool: pg.Pool;
beforeAll(async () => {
  api = await startOrdersApi('orders_replies_together');
  pool = createPool(api.db.url, defaultDatabaseTimeouts);
});
afterAll(async () => {
  await pool?.end();
  await api?.close();
});

/** The linger the orders service ships with: its config's default. */
const shippedLingerMs = configSchema.parse({
  DATABASE_URL: 'postgresql://localhost/orders',
  KAFKA_BROKERS: '127.0.0.1:9092',
}).KAFKA_CHUNK_LINGER_MS;

function reply(type: string, orderId: string): EventEnvelope {
  const stock = type === STOCK_RESERVED;
  return {
    id: randomUUID(),
    source: stock ? '/inventory' : '/billing',
    type,
    specversion: '1.0',
    time: new Date().toISOString(),
    subject: orderId,
    aggregatetype: stock ? 'reservation' : 'payment',
    schemaversion: 1,
    datacontenttype: 'application/json',
    data: stock
      ? { orderId, items: [{ sku: 'KB-101', quantity: 1 }] }
      : { orderId, authorizationId: 'auth_1', amountCents: '8900', currency: 'EUR' },
  };
}

async function newOrder(): Promise<string> {
  const res = await postOrder(api.baseUrl, {
    customerId: 'together',
    currency: 'EUR',
    items: [{ sku: 'KB-101', quantity: 1 }],
  });
  return ((await res.json()) as { id: string }).id;
}

/** Both topics, six partitions each as deployed; every order's reply on each, keyed by the order. */
async function produceReplies(prefix: string, orderIds: string[]): Promise<void> {
  const kafka = createKafka({
    clientId: prefix,
    brokers: sharedKafkaBrokers(),
    logger: pino({ level: 'silent' }),
  });
  const topics = {
    [STOCK_RESERVED]: `${prefix}reservation.events`,
    [PAYMENT_AUTHORIZED]: `${prefix}payment.events`,
  };
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: Object.values(topics).flatMap((topic) =>
      [topic, `${topic}.dlt`].map((name) => ({ topic: name, numPartitions: PARTITIONS })),
    ),
  });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  for (const [type, topic] of Object.entries(topics))
    await producer.send({ topic, acks: -1, messages: orderIds.map((id) => toKafkaMessage(reply(type, id))) });
  await producer.disconnect();
}

describe.each<KafkaClientName>(['kafkajs', 'platformatic'])('the orders reply consumer (%s)', (client) => {
  let consumer: EventConsumer | undefined;
  afterAll(() => consumer?.stop());

  it('applies the two replies of an order fetched together in one transaction', {
    timeout: 120_000,
  }, async () => {
    expect(shippedLingerMs).toBeGreaterThan(0);
    const prefix = `replies-together-${randomBytes(4).toString('hex')}.`;
    const orderIds = await Promise.all(Array.from({ length: ORDERS }, () => newOrder()));
    // Produced before the consumer starts: its first fetches hold both topics' replies.
    await produceReplies(prefix, orderIds);

    consumer = startEventConsumer({
      source: EVENT_SOURCE,
      groupId: `${prefix}orders`,
      kafka: {
        brokers: sharedKafkaBrokers(),
        topicPrefix: prefix,
        topicLayout: { partitions: PARTITIONS },
        client,
      },
      aggregateTypes: ['reservation', 'payment'],
      transaction: transactionOn(pool),
      handlers: replyHandlers,
      logger: pino({ level: 'silent' }),
      registry: createMetricsRegistry(`${prefix}orders`),
      // The mechanism the shipped linger turns on, with a gathering window wide enough that the
      // test does not depend on how fast a starved machine hands over the partitions of one fetch.
      chunkLingerMs: TEST_LINGER_MS,
      chunkGatherMs: TEST_LINGER_MS,
    });

    await eventually(
      'every order is confirmed',
      async () => {
        const [row] = await queryOnce<{ n: number }>(
          api.db.url,
          `select count(*)::int as n from orders where id = any($1::uuid[]) and status = 'CONFIRMED'`,
          [orderIds],
        );
        return row?.n === ORDERS ? true : undefined;
      },
      90_000,
    );

    // Each order's replies were recorded by one transaction: one xmin per order.
    const transactions = await queryOnce<{ order_id: string; replies: number; transactions: number }>(
      api.db.url,
      `select order_id::text, count(*)::int as replies, count(distinct xmin::text)::int as transactions
         from order_history where order_id = any($1::uuid[]) and event_type in ($2, $3)
        group by order_id order by order_id`,
      [orderIds, STOCK_RESERVED, PAYMENT_AUTHORIZED],
    );
    expect(transactions).toEqual(
      [...orderIds].sort().map((id) => ({ order_id: id, replies: 2, transactions: 1 })),
    );
    const decisions = await queryOnce<{ n: number }>(
      api.db.url,
      `select count(*)::int as n from outbox where aggregate_id = any($1::text[]) and event_type = 'ORDER_CONFIRMED'`,
      [orderIds],
    );
    expect(decisions[0]?.n).toBe(ORDERS);
    expect(consumer.health()).toMatchObject({ status: 'ok', applied: 2 * ORDERS, deadLettered: 0 });
  });
});
