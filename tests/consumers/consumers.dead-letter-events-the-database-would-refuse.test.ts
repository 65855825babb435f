// Messages that decode but that the database could never store (issue 13 item 2) — an event id
// that is not a UUID (processed_events.event_id), an order with the same SKU on two lines (the
// primary key of reservations and order lines), an amount beyond bigint — used to throw in the
// handler on every delivery and block their partition for ever. Injected with a raw producer in
// front of a valid order on the same partition, each must land in the dead-letter topic with its
// reason, and the order behind them must complete.
import { randomUUID } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { type IHeaders, type Kafka, type Message, Partitioners } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consumerHealth,
  header,
  messageCount,
  orderReaches,
  placeOrder,
  readMessages,
  testKafka,
} from './support.ts';

useLeakGuard();

let stack: Stack;
let kafka: Kafka;
beforeAll(async () => {
  stack = await startStack('refused', sharedKafkaBrokers());
  kafka = testKafka(sharedKafkaBrokers());
});
afterAll(() => stack?.stop());

const ceHeaders = (overrides: Record<string, string> = {}): IHeaders => ({
  ce_specversion: '1.0',
  ce_id: randomUUID(),
  ce_source: '/refused-test',
  ce_type: 'ORDER_CREATED',
  ce_time: new Date().toISOString(),
  ce_subject: 'refused',
  ce_aggregatetype: 'order',
  ce_schemaversion: '1',
  'content-type': 'application/json',
  ...overrides,
});

const order = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    orderId: randomUUID(),
    customerId: 'refused',
    currency: 'EUR',
    totalCents: '900',
    items: [{ sku: 'CB-505', quantity: 1, unitPriceCents: '900' }],
    ...overrides,
  });

const REFUSED: { name: string; message: Message; reason: RegExp }[] = [
  {
    name: 'event id not a UUID',
    message: { key: 'refused-1', value: order(), headers: ceHeaders({ ce_id: 'evt-42' }) },
    reason: /^ce_id is not a UUID$/,
  },
  {
    name: 'same SKU on two lines',
    message: {
      key: 'refused-2',
      value: order({
        totalCents: '1800',
        items: [
          { sku: 'CB-505', quantity: 1, unitPriceCents: '900' },
          { sku: 'CB-505', quantity: 1, unitPriceCents: '900' },
        ],
      }),
      headers: ceHeaders(),
    },
    reason: /^invalid ORDER_CREATED v1: .*the same SKU appears on two lines/s,
  },
  {
    name: 'amount beyond bigint',
    message: {
      key: 'refused-3',
      value: order({
        totalCents: '99999999999999999999',
        items: [{ sku: 'CB-505', quantity: 1, unitPriceCents: '99999999999999999999' }],
      }),
      headers: ceHeaders(),
    },
    reason: /^invalid ORDER_CREATED v1: .*totalCents/s,
  },
];

describe('consumers dead-letter events the database would refuse', () => {
  it('dead-letters each with its reason and applies the order behind them', async () => {
    const orderTopic = `${stack.topicPrefix}order.events`;
    const dltTopic = `${orderTopic}.dlt`;
    // Hold the order's event in the outbox, so the refused events go onto its partition first.
    await stack.services['relay-orders'].stop();
    const orderId = await placeOrder(stack, 'behind-the-refused', [{ sku: 'CB-505', quantity: 1 }]);
    const admin = kafka.admin();
    await admin.connect();
    const metadata = await admin
      .fetchTopicMetadata({ topics: [orderTopic] })
      .finally(() => admin.disconnect());
    const partitionMetadata = metadata.topics[0]?.partitions ?? [];
    const partitioner = Partitioners.DefaultPartitioner();
    const partitionOf = (key: string) =>
      partitioner({ topic: orderTopic, partitionMetadata, message: { key, value: null } });
    const partition = partitionOf(orderId);
    for (const refused of REFUSED) {
      let i = 0;
      while (partitionOf(`${refused.message.key}-${i}`) !== partition) i += 1;
      refused.message.key = `${refused.message.key}-${i}`;
    }
    const producer = kafka.producer({ idempotent: true, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    try {
      await producer.send({ topic: orderTopic, acks: -1, messages: REFUSED.map(({ message }) => message) });
    } finally {
      await producer.disconnect();
    }
    await stack.restart('relay-orders');

    const confirmed = await orderReaches(stack, orderId, 'CONFIRMED', 90_000);
    expect(confirmed).toMatchObject({ stockStatus: 'RESERVED', paymentStatus: 'AUTHORIZED' });

    // Inventory and billing each dead-letter their copy of each, with its reason.
    await eventually('6 dead letters', async () =>
      (await messageCount(kafka, dltTopic)) >= 2 * REFUSED.length ? true : undefined,
    );
    const letters = await readMessages(kafka, dltTopic);
    expect(letters).toHaveLength(2 * REFUSED.length);
    for (const consumer of ['inventory', 'billing']) {
      const mine = letters.filter((m) => header(m, 'dlt_consumer') === `${stack.topicPrefix}${consumer}`);
      expect(mine, consumer).toHaveLength(REFUSED.length);
      for (const refused of REFUSED) {
        const letter = mine.find((m) => m.key?.toString() === refused.message.key);
        expect(header(letter ?? {}, 'dlt_reason'), `${consumer}: ${refused.name}`).toMatch(refused.reason);
        expect(header(letter ?? {}, 'dlt_partition')).toBe(String(partition));
      }
    }
    for (const name of ['inventory', 'billing'] as const) {
      expect(await consumerHealth(stack, name), name).toMatchObject({
        status: 'ok',
        applied: 1,
        deadLettered: REFUSED.length,
      });
    }
    // None of them had an effect.
    const reservations = await queryOnce(stack.databases.inventory.url, 'select order_id from reservations');
    expect(reservations).toEqual([{ order_id: orderId }]);
  }, 150_000);
});
