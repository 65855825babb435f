// Helpers shared by the consumer tests: the orders API, the consumers' /healthz counters, and a
// topic reader that keeps what the devstack reader drops (value and headers), so messages can be
// copied back onto a topic byte for byte and dead-letter headers can be inspected.
import { randomBytes, randomUUID } from 'node:crypto';
import { type EventEnvelope, ORDER_CREATED, type OrderCreatedV1, toKafkaMessage } from '@outbox/contracts';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { eventually, type Stack } from '@outbox/devstack/testing/stack';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import { type IHeaders, Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';

export type Order = {
  id: string;
  status: string;
  stockStatus: string | null;
  paymentStatus: string | null;
  cancelReason?: string;
  history: { event: string }[];
};

export type ConsumerHealth = {
  status: string;
  applied: number;
  duplicates: number;
  ignored: number;
  deadLettered: number;
};

export type Item = { sku: string; quantity: number };

export async function placeOrder(stack: Stack, customerId: string, items: Item[]): Promise<string> {
  const res = await fetch(`${stack.services.orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId, currency: 'EUR', items }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

export async function getOrder(stack: Stack, id: string): Promise<Order> {
  const res = await fetch(`${stack.services.orders.url}/orders/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Order;
}

export function orderReaches(stack: Stack, id: string, status: string, timeoutMs = 60_000): Promise<Order> {
  return eventually(
    `order ${id} is ${status}`,
    async () => {
      const order = await getOrder(stack, id).catch(() => undefined);
      return order?.status === status ? order : undefined;
    },
    timeoutMs,
  );
}

/** The consumer counters of inventory or billing (they reset when the process restarts). */
export async function consumerHealth(stack: Stack, name: 'inventory' | 'billing'): Promise<ConsumerHealth> {
  return (await (await fetch(`${stack.services[name].url}/healthz`)).json()) as ConsumerHealth;
}

export function testKafka(brokers: string[]): Kafka {
  fixKafkajsIdleTimerLoop();
  return new Kafka({
    clientId: `consumers-test-${randomBytes(3).toString('hex')}`,
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3000,
  });
}

export type FullMessage = {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: IHeaders;
};

export function header(message: { headers?: IHeaders }, name: string): string | undefined {
  const value = message.headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === null ? undefined : first.toString();
}

/** Number of messages on a topic (sum of the partitions' high watermarks; nothing is deleted). */
export async function messageCount(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Every message of a topic from offset 0 up to the end offsets as of the call, with key, value
 * and headers, sorted by partition and offset. Uses a consumer group of its own, disconnected
 * before this returns.
 */
export async function readMessages(kafka: Kafka, topic: string, timeoutMs = 30_000): Promise<FullMessage[]> {
  const admin = kafka.admin();
  await admin.connect();
  let ends: Map<number, number>;
  try {
    ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)] as const));
  } finally {
    await admin.disconnect();
  }
  const messages: FullMessage[] = [];
  const complete = () => {
    const next = new Map<number, number>();
    for (const m of messages) next.set(m.partition, Math.max(next.get(m.partition) ?? 0, m.offset + 1));
    return [...ends].every(([partition, high]) => (next.get(partition) ?? 0) >= high);
  };
  if (complete()) return [];

  const consumer = kafka.consumer({
    groupId: `consumers-test-reader-${randomBytes(6).toString('hex')}`,
    allowAutoTopicCreation: false,
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
    maxWaitTimeInMs: 200,
  });
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          const offset = Number(message.offset);
          if (offset >= (ends.get(batch.partition) ?? 0)) continue;
          messages.push({
            partition: batch.partition,
            offset,
            key: message.key,
            value: message.value,
            headers: message.headers ?? {},
          });
        }
        if (complete()) finish();
      },
    });
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    if ((await Promise.race([finished, timedOut])) === 'timeout') {
      throw new Error(`readMessages(${topic}): timed out after ${timeoutMs} ms with ${messages.length}`);
    }
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
  return messages.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}

/** True once the group's committed offsets reach the end of every partition of the topics. */
export async function groupCaughtUp(kafka: Kafka, groupId: string, topics: string[]): Promise<boolean> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (const topic of topics) {
      const ends = await admin.fetchTopicOffsets(topic);
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const at = new Map(
        committed?.partitions.map((p) => [p.partition, Math.max(0, Number(p.offset))]) ?? [],
      );
      if (ends.some((end) => (at.get(end.partition) ?? 0) < Number(end.high))) return false;
    }
    return true;
  } finally {
    await admin.disconnect();
  }
}

/** An ORDER_CREATED event for `customerId`, keyed `one-key`: all on one partition, in order. */
export function orderCreated(customerId: string, quantity = 1): EventEnvelope<OrderCreatedV1> {
  return {
    id: randomUUID(),
    source: '/consumers-test',
    type: ORDER_CREATED,
    specversion: '1.0',
    time: new Date().toISOString(),
    subject: 'one-key',
    aggregatetype: 'order',
    schemaversion: 1,
    datacontenttype: 'application/json',
    data: {
      orderId: randomUUID(),
      customerId,
      currency: 'EUR',
      totalCents: '100',
      items: [{ sku: 'CB-505', quantity, unitPriceCents: '100' }],
    },
  };
}

/** `<prefix>order.events` and its dead-letter topic, one partition each; returns the topic. */
export async function createOrderTopics(kafka: Kafka, prefix: string): Promise<string> {
  const topic = `${prefix}order.events`;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [topic, `${topic}.dlt`].map((name) => ({ topic: name, numPartitions: 1 })),
    });
  } finally {
    await admin.disconnect();
  }
  return topic;
}

/** Put events on a topic as the relay does (CloudEvents binary mode), acknowledged by all. */
export async function produce(kafka: Kafka, topic: string, events: EventEnvelope[]): Promise<void> {
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: events.map(toKafkaMessage) });
  } finally {
    await producer.disconnect();
  }
}

/**
 * A database of this test file's own, with the inbox and outbox tables and `effects`, one row per
 * applied event; dropped after the file (after the file's own afterAll hooks, which run first).
 */
export function useEffectsDatabase(name: string): () => pg.Pool {
  let database: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    database = await createOutboxDatabase(name);
    pool = new pg.Pool({ connectionString: database.url, max: 3 });
    await pool.query('create table effects (event_id uuid primary key)');
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });
  return () => pool as pg.Pool;
}
