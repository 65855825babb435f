// A message a consumer can never read (not JSON, invalid data, a schema version it does not know,
// not a CloudEvent at all) must not block its partition: it goes to `<topic>.dlt` with the reason
// and where it came from, and the consumer moves on to the next message. The dead letters can be
// replayed to their topic once the cause is fixed; still poison, they come straight back.
import { randomUUID } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import { replayDeadLetters } from '@outbox/inbox';
import { kafkajsClient } from '@outbox/runtime/kafka/kafkajs';
import { type IHeaders, type Kafka, type Message, Partitioners } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consumerHealth,
  type FullMessage,
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
  stack = await startStack('deadletter', sharedKafkaBrokers());
  kafka = testKafka(sharedKafkaBrokers());
});
afterAll(() => stack?.stop());

const ceHeaders = (overrides: Record<string, string> = {}): IHeaders => ({
  ce_specversion: '1.0',
  ce_id: randomUUID(),
  ce_source: '/poison-test',
  ce_type: 'ORDER_CREATED',
  ce_time: new Date().toISOString(),
  ce_subject: 'poison',
  ce_aggregatetype: 'order',
  ce_schemaversion: '1',
  'content-type': 'application/json',
  ...overrides,
});

const validData = {
  orderId: randomUUID(),
  customerId: 'poison',
  currency: 'EUR',
  totalCents: '900',
  items: [{ sku: 'CB-505', quantity: 1, unitPriceCents: '900' }],
};

/** The four kinds of poison, in the order they are produced, with the reason each must get. */
const POISON: { name: string; message: Message; reason: RegExp }[] = [
  {
    name: 'not JSON',
    message: { key: 'poison-1', value: 'this is {not JSON', headers: ceHeaders() },
    reason: /^message value is not JSON$/,
  },
  {
    name: 'schema-invalid data',
    message: {
      key: 'poison-2',
      value: JSON.stringify({ ...validData, orderId: 'not-a-uuid', items: [] }),
      headers: ceHeaders(),
    },
    reason: /^invalid ORDER_CREATED v1: .*orderId/s,
  },
  {
    name: 'unknown schema version',
    message: {
      key: 'poison-3',
      value: JSON.stringify(validData),
      headers: ceHeaders({ ce_schemaversion: '99' }),
    },
    reason: /^unknown event type or version: ORDER_CREATED v99$/,
  },
  {
    name: 'no CloudEvents headers',
    message: {
      key: 'poison-4',
      value: JSON.stringify(validData),
      headers: { 'content-type': 'application/json' },
    },
    reason: /^missing header ce_specversion$/,
  },
];

const single = (headers: IHeaders, name: string) => {
  expect(Array.isArray(headers[name]), `header ${name} appears once`).toBe(false);
  return header({ headers }, name);
};

/** The dead letters of one consumer, checked against the poison they came from. */
function checkDeadLetters(
  letters: FullMessage[],
  consumer: string,
  source: { topic: string; partition: number; offsets: number[] },
) {
  const mine = letters
    .filter((m) => header(m, 'dlt_consumer') === consumer)
    .sort((a, b) => Number(header(a, 'dlt_offset')) - Number(header(b, 'dlt_offset')));
  expect(mine).toHaveLength(POISON.length);
  // By source offset, the n-th letter is the n-th poison message.
  mine.forEach((letter, n) => {
    const poison = POISON[n];
    if (!poison) throw new Error(`no poison message #${n}`);
    expect(single(letter.headers, 'dlt_reason'), poison.name).toMatch(poison.reason);
    expect(single(letter.headers, 'dlt_topic')).toBe(source.topic);
    expect(single(letter.headers, 'dlt_partition')).toBe(String(source.partition));
    expect(single(letter.headers, 'dlt_offset')).toBe(String(source.offsets[n]));
    expect(single(letter.headers, 'dlt_consumer')).toBe(consumer);
    expect(Number.isNaN(Date.parse(single(letter.headers, 'dlt_time') ?? ''))).toBe(false);
    // The original message, untouched: key, value and every original header.
    expect(letter.key?.toString()).toBe(poison.message.key);
    expect(letter.value?.toString()).toBe(poison.message.value);
    for (const [name, value] of Object.entries(poison.message.headers ?? {})) {
      expect(single(letter.headers, name), `header ${name}`).toBe(String(value));
    }
  });
}

describe('consumers dead-letter poison messages and move on', () => {
  it('dead-letters each unreadable message with its reason, confirms the order behind them, and replays', async () => {
    const orderTopic = `${stack.topicPrefix}order.events`;
    const dltTopic = `${orderTopic}.dlt`;
    const inventoryGroup = `${stack.topicPrefix}inventory`;
    const billingGroup = `${stack.topicPrefix}billing`;

    // Hold the order's event in the outbox, so the poison goes onto its partition first.
    await stack.services['relay-orders'].stop();
    const orderId = await placeOrder(stack, 'behind-the-poison', [{ sku: 'CB-505', quantity: 2 }]);
    const admin = kafka.admin();
    await admin.connect();
    let partitionMetadata: Awaited<
      ReturnType<typeof admin.fetchTopicMetadata>
    >['topics'][number]['partitions'];
    try {
      const metadata = await admin.fetchTopicMetadata({ topics: [orderTopic] });
      partitionMetadata = metadata.topics[0]?.partitions ?? [];
    } finally {
      await admin.disconnect();
    }
    // The partition the relay's producer (kafkajs default partitioner) will put the order on, and
    // keys of our own that land there too (so that a replay, which produces by key, does as well).
    const partitioner = Partitioners.DefaultPartitioner();
    const partitionOf = (key: string) =>
      partitioner({ topic: orderTopic, partitionMetadata, message: { key, value: null } });
    const partition = partitionOf(orderId);
    for (const poison of POISON) {
      let i = 0;
      while (partitionOf(`${poison.message.key}-${i}`) !== partition) i += 1;
      poison.message.key = `${poison.message.key}-${i}`;
    }

    const producer = kafka.producer({ idempotent: true, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    try {
      await producer.send({
        topic: orderTopic,
        acks: -1,
        messages: POISON.map(({ message }) => message),
      });
    } finally {
      await producer.disconnect();
    }
    await stack.restart('relay-orders');

    // The valid order behind them is not blocked.
    const order = await orderReaches(stack, orderId, 'CONFIRMED');
    expect(order).toMatchObject({ stockStatus: 'RESERVED', paymentStatus: 'AUTHORIZED' });
    // ...and it really was behind them, on the same partition.
    const onPartition = (await readTopic(sharedKafkaBrokers(), orderTopic)).filter(
      (m) => m.partition === partition,
    );
    const poisonOffsets = onPartition.filter((m) => m.key?.startsWith('poison-')).map((m) => m.offset);
    expect(poisonOffsets).toEqual([0, 1, 2, 3]);
    const created = onPartition.find((m) => m.key === orderId);
    expect(created?.offset).toBe(4);

    // Both consumers of order.events dead-letter their own copy of each poison message.
    await eventually('8 dead letters', async () =>
      (await messageCount(kafka, dltTopic)) >= 8 ? true : undefined,
    );
    const letters = await readMessages(kafka, dltTopic);
    expect(letters).toHaveLength(2 * POISON.length);
    const source = { topic: orderTopic, partition, offsets: poisonOffsets };
    checkDeadLetters(letters, inventoryGroup, source);
    checkDeadLetters(letters, billingGroup, source);
    for (const name of ['inventory', 'billing'] as const) {
      expect(await consumerHealth(stack, name), name).toMatchObject({ applied: 1, deadLettered: 4 });
    }

    // Replay: each poison message goes back to order.events once (not once per consumer that
    // dead-lettered it), without its dlt_* headers...
    const replayGroup = `${stack.topicPrefix}dlt-replay`;
    const replayed = await replayDeadLetters(kafkajsClient(kafka), dltTopic, replayGroup);
    expect(replayed).toMatchObject({ replayed: 4, byTopic: { [orderTopic]: 4 }, complete: true });
    // ...where each consumer reads the 4 again and, still poison, dead-letters them again:
    // 8 + 2 × 4 letters in all.
    await eventually(
      'the replayed messages are dead-lettered again',
      async () => {
        const [inventory, billing] = await Promise.all([
          consumerHealth(stack, 'inventory'),
          consumerHealth(stack, 'billing'),
        ]);
        return inventory.deadLettered >= 8 && billing.deadLettered >= 8 ? true : undefined;
      },
      30_000,
    );
    const all = await readMessages(kafka, dltTopic);
    expect(all).toHaveLength(8 + 8);
    const again = all.filter((m) => Number(header(m, 'dlt_offset')) > 4);
    expect(again).toHaveLength(8);
    for (const letter of again) {
      // One set of dlt_* headers (the replay stripped the old ones), naming the replayed copy.
      expect(single(letter.headers, 'dlt_topic')).toBe(orderTopic);
      expect(single(letter.headers, 'dlt_partition')).toBe(String(partition));
      const poison = POISON.find((p) => p.message.key === letter.key?.toString());
      expect(poison, `letter keyed ${letter.key}`).toBeDefined();
      expect(single(letter.headers, 'dlt_reason')).toMatch(poison?.reason ?? /never/);
    }
    for (const consumer of [inventoryGroup, billingGroup]) {
      expect(again.filter((m) => header(m, 'dlt_consumer') === consumer)).toHaveLength(4);
    }
    for (const name of ['inventory', 'billing'] as const) {
      expect(await consumerHealth(stack, name), name).toMatchObject({ applied: 1, deadLettered: 8 });
    }

    // The replay group committed its progress: a second run replays only the newer letters,
    // again once per original message: 4.
    expect(await replayDeadLetters(kafkajsClient(kafka), dltTopic, replayGroup)).toMatchObject({
      replayed: 4,
      byTopic: { [orderTopic]: 4 },
    });

    // No poison had an effect: one reservation and one payment, both for the valid order.
    const reservations = await queryOnce(stack.databases.inventory.url, 'select order_id from reservations');
    expect(reservations).toEqual([{ order_id: orderId }]);
    const payments = await queryOnce(stack.databases.billing.url, 'select order_id from payments');
    expect(payments).toEqual([{ order_id: orderId }]);
  }, 120_000);
});
