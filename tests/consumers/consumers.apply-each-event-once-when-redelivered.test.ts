// Kafka delivers at least once: a producer retry, a crash before an offset commit, an operator
// replaying a topic. Every consumer of the saga (inventory, billing, and orders for the replies)
// must apply each event's effect once however often the event arrives. Here the same events are
// delivered again in both ways that happen in production, and nothing may change.
import { setTimeout as sleep } from 'node:timers/promises';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { type Kafka, Partitioners } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consumerHealth,
  getOrder,
  groupCaughtUp,
  header,
  type Item,
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
  stack = await startStack('redeliver', sharedKafkaBrokers());
  kafka = testKafka(sharedKafkaBrokers());
});
afterAll(() => stack?.stop());

const ORDERS: { customer: string; items: Item[] }[] = [
  { customer: 'redeliver-1', items: [{ sku: 'KB-101', quantity: 1 }] },
  {
    customer: 'redeliver-2',
    items: [
      { sku: 'KB-101', quantity: 2 },
      { sku: 'CB-505', quantity: 3 },
    ],
  },
  { customer: 'redeliver-3', items: [{ sku: 'MS-202', quantity: 4 }] },
];
const SEEDED: Record<string, number> = { 'KB-101': 100, 'MS-202': 250, 'CB-505': 1000 };

type TopicName = 'order' | 'reservation' | 'payment';
type Service = 'orders' | 'inventory' | 'billing';
const topic = (name: TopicName) => `${stack.topicPrefix}${name}.events`;
const group = (service: Service) => `${stack.topicPrefix}${service}`;
/** What each consumer group reads. */
const GROUP_TOPICS: [Service, TopicName[]][] = [
  ['orders', ['reservation', 'payment']],
  ['inventory', ['order']],
  ['billing', ['order']],
];

async function allCaughtUp(): Promise<boolean> {
  for (const [service, topics] of GROUP_TOPICS) {
    if (!(await groupCaughtUp(kafka, group(service), topics.map(topic)))) return false;
  }
  return true;
}

const waitForTopicCounts = (counts: Record<TopicName, number>) =>
  eventually(
    `topics hold ${JSON.stringify(counts)} messages`,
    async () => {
      for (const [name, count] of Object.entries(counts)) {
        if ((await messageCount(kafka, topic(name as TopicName))) !== count) return undefined;
      }
      return true;
    },
    30_000,
  );

describe('consumers apply each event once when it is delivered again', () => {
  it('changes nothing when every event is re-published and then replayed from offset 0', async () => {
    const ids: string[] = [];
    for (const { customer, items } of ORDERS) ids.push(await placeOrder(stack, customer, items));
    for (const id of ids) await orderReaches(stack, id, 'CONFIRMED');
    // Every outbox drained: 3 ORDER_CREATED + 3 ORDER_CONFIRMED, 3 STOCK_RESERVED, 3 PAYMENT_AUTHORIZED.
    await waitForTopicCounts({ order: 6, reservation: 3, payment: 3 });
    await eventually(
      'every consumer group committed everything',
      async () => (await allCaughtUp()) || undefined,
    );

    // (a) Re-publish: the same messages again (key, value, headers), as a producer retry would.
    const producer = kafka.producer({ idempotent: true, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    try {
      for (const name of ['order', 'reservation', 'payment'] as const) {
        const messages = await readMessages(kafka, topic(name));
        expect(messages).toHaveLength(name === 'order' ? 6 : 3);
        await producer.send({
          topic: topic(name),
          acks: -1,
          messages: messages.map(({ key, value, headers }) => ({ key, value, headers })),
        });
      }
    } finally {
      await producer.disconnect();
    }
    await waitForTopicCounts({ order: 12, reservation: 6, payment: 6 });
    await eventually(
      'inventory and billing skip the 3 re-published ORDER_CREATED',
      async () => {
        const [inventory, billing] = await Promise.all([
          consumerHealth(stack, 'inventory'),
          consumerHealth(stack, 'billing'),
        ]);
        return inventory.duplicates >= 3 && billing.duplicates >= 3 ? true : undefined;
      },
      30_000,
    );
    await eventually('the re-published copies are consumed', async () => (await allCaughtUp()) || undefined);
    for (const name of ['inventory', 'billing'] as const) {
      expect(await consumerHealth(stack, name)).toMatchObject({ applied: 3, duplicates: 3, deadLettered: 0 });
    }

    // (b) Replay from offset 0: stop the consumers, rewind their groups, start them again.
    await Promise.all([
      stack.services.orders.stop(),
      stack.services.inventory.stop(),
      stack.services.billing.stop(),
    ]);
    const admin = kafka.admin();
    await admin.connect();
    try {
      for (const [service, topics] of GROUP_TOPICS) {
        for (const name of topics) {
          await admin.resetOffsets({ groupId: group(service), topic: topic(name), earliest: true });
        }
      }
    } finally {
      await admin.disconnect();
    }
    expect(await allCaughtUp()).toBe(false);
    await Promise.all([stack.restart('orders'), stack.restart('inventory'), stack.restart('billing')]);

    // Each ORDER_CREATED now arrives twice more (the original and its copy): 6 duplicates each.
    await eventually(
      'inventory and billing re-read order.events and skip every ORDER_CREATED',
      async () => {
        const [inventory, billing] = await Promise.all([
          consumerHealth(stack, 'inventory'),
          consumerHealth(stack, 'billing'),
        ]);
        return inventory.duplicates >= 6 && billing.duplicates >= 6 ? true : undefined;
      },
      60_000,
    );
    await eventually(
      'every group re-consumed its topics',
      async () => (await allCaughtUp()) || undefined,
      60_000,
    );
    await sleep(3000); // a relay poll or two: anything written by a redelivery would be published by now
    for (const name of ['inventory', 'billing'] as const) {
      const health = await consumerHealth(stack, name);
      expect(health, name).toMatchObject({ applied: 0, duplicates: 6, ignored: 6, deadLettered: 0 });
    }

    const { databases } = stack;
    // Inventory: one reservation per order, stock decremented once.
    const reservations = await queryOnce<{ order_id: string; status: string }>(
      databases.inventory.url,
      'select order_id, status from reservations order by order_id',
    );
    expect(reservations).toEqual([...ids].sort().map((order_id) => ({ order_id, status: 'RESERVED' })));
    const wanted = new Map<string, number>();
    for (const { items } of ORDERS) {
      for (const item of items) wanted.set(item.sku, (wanted.get(item.sku) ?? 0) + item.quantity);
    }
    const stock = await queryOnce<{ sku: string; available: number }>(
      databases.inventory.url,
      'select sku, available from stock where sku = any($1::text[]) order by sku',
      [[...wanted.keys()]],
    );
    expect(Object.fromEntries(stock.map((row) => [row.sku, row.available]))).toEqual(
      Object.fromEntries([...wanted].map(([sku, quantity]) => [sku, (SEEDED[sku] ?? 0) - quantity])),
    );
    const items = await queryOnce<{ count: string }>(
      databases.inventory.url,
      'select count(*) from reservation_items',
    );
    expect(items[0]?.count).toBe('4');

    // Billing: one payment per order, authorized once, for the ORDER_CREATED event on the topic.
    const created = (await readMessages(kafka, topic('order'))).filter(
      (m) => header(m, 'ce_type') === 'ORDER_CREATED',
    );
    expect(created).toHaveLength(6); // 3 events, each on the topic twice
    const createdIds = [...new Set(created.map((m) => header(m, 'ce_id')))].sort();
    expect(createdIds).toHaveLength(3);
    const payments = await queryOnce<{ order_id: string; status: string; event_id: string }>(
      databases.billing.url,
      'select order_id, status, event_id from payments order by event_id',
    );
    expect(payments.map((p) => p.event_id)).toEqual(createdIds);
    expect(payments.map((p) => p.order_id).sort()).toEqual([...ids].sort());
    expect(new Set(payments.map((p) => p.status))).toEqual(new Set(['AUTHORIZED']));

    // Orders: each order decided once; its history records each reply once.
    for (const id of ids) {
      const order = await getOrder(stack, id);
      expect(order.status).toBe('CONFIRMED');
      expect(order.history.map((entry) => entry.event).sort()).toEqual(
        ['ORDER_CONFIRMED', 'PAYMENT_AUTHORIZED', 'STOCK_RESERVED'].sort(),
      );
    }

    // processed_events: one row per (consumer, event), and only for the events each one handles.
    const processed = async (url: string) =>
      queryOnce<{ consumer: string; event_type: string; rows: string; events: string }>(
        url,
        `select consumer, event_type, count(*) as rows, count(distinct event_id) as events
           from processed_events group by consumer, event_type order by consumer, event_type`,
      );
    expect(await processed(databases.inventory.url)).toEqual([
      { consumer: group('inventory'), event_type: 'ORDER_CREATED', rows: '3', events: '3' },
    ]);
    expect(await processed(databases.billing.url)).toEqual([
      { consumer: group('billing'), event_type: 'ORDER_CREATED', rows: '3', events: '3' },
    ]);
    expect(await processed(databases.orders.url)).toEqual([
      { consumer: group('orders'), event_type: 'PAYMENT_AUTHORIZED', rows: '3', events: '3' },
      { consumer: group('orders'), event_type: 'STOCK_RESERVED', rows: '3', events: '3' },
    ]);
    for (const url of [databases.inventory.url, databases.billing.url]) {
      const ids = await queryOnce<{ event_id: string }>(
        url,
        'select event_id from processed_events order by event_id',
      );
      expect(ids.map((row) => row.event_id)).toEqual(createdIds);
    }

    // Outboxes: exactly one reply per order from each side, and no second decision by orders.
    const outbox = (url: string) =>
      queryOnce<{ aggregate_id: string; event_type: string; count: string }>(
        url,
        `select aggregate_id, event_type, count(*) from outbox
          group by aggregate_id, event_type order by aggregate_id, event_type`,
      );
    const perOrder = (types: string[]) =>
      [...ids]
        .sort()
        .flatMap((aggregate_id) => types.map((event_type) => ({ aggregate_id, event_type, count: '1' })));
    expect(await outbox(databases.inventory.url)).toEqual(perOrder(['STOCK_RESERVED']));
    expect(await outbox(databases.billing.url)).toEqual(perOrder(['PAYMENT_AUTHORIZED']));
    expect(await outbox(databases.orders.url)).toEqual(perOrder(['ORDER_CONFIRMED', 'ORDER_CREATED']));
    // And the topics hold nothing new: only the originals and the copies this test produced.
    await waitForTopicCounts({ order: 12, reservation: 6, payment: 6 });
  }, 240_000);
});
