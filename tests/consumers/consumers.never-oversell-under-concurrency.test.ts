// 500 orders for a product with 200 in stock, placed concurrently and reserved by two inventory
// processes at once (one consumer group, the partitions split between them): exactly 200 are
// confirmed, the other 300 cancelled with their payments voided, and stock ends at 0, never below.
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@outbox/devstack/ports';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import { planStack } from '@outbox/devstack/stack-plan';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerHealth, testKafka } from './support.ts';

useLeakGuard();

const SKU = 'MN-303';
const IN_STOCK = 200;
const ORDERS = 500;
// Concurrent POSTs per wave: what the orders API admits at once (10 in their transaction, by
// default); more queue briefly or are shed with 503 overloaded, and retried below
// (see orders-api.busy-pool-answers-503-not-500.test.ts).
const WAVE = 10;

let stack: Stack;
let kafka: Kafka;
/** A second inventory process in the same consumer group: reservations run concurrently. */
let secondInventory: ServiceProcess | undefined;

beforeAll(async () => {
  const brokers = sharedKafkaBrokers();
  stack = await startStack('oversell', brokers);
  kafka = testKafka(brokers);
  await queryOnce(stack.databases.inventory.url, 'update stock set available = $1 where sku = $2', [
    IN_STOCK,
    SKU,
  ]);
  const { env } = planStack({
    databaseUrls: {
      orders: stack.databases.orders.url,
      inventory: stack.databases.inventory.url,
      billing: stack.databases.billing.url,
    },
    kafkaBrokers: brokers,
    topicPrefix: stack.topicPrefix,
    groupPrefix: stack.topicPrefix,
  }).inventory;
  secondInventory = await startService('inventory', env, {
    port: await freePort(),
    label: 'oversell',
    name: 'inventory-2',
  });
});
afterAll(async () => {
  await secondInventory?.stop();
  await stack?.stop();
});

/** POST one order of 1 × SKU; a 503 (nothing written, retry later) is retried, as a client would. */
async function postOrder(customerId: string): Promise<Response> {
  for (let attempt = 1; ; attempt += 1) {
    const res = await fetch(`${stack.services.orders.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId, currency: 'EUR', items: [{ sku: SKU, quantity: 1 }] }),
    });
    if (res.status !== 503 || attempt === 5) return res;
    await res.arrayBuffer();
    await sleep(1000);
  }
}

const countBy = async (url: string, sql: string) =>
  Object.fromEntries(
    (await queryOnce<{ status: string; count: string }>(url, sql)).map((row) => [
      row.status,
      Number(row.count),
    ]),
  );

describe('inventory never oversells under concurrency', () => {
  it(`confirms exactly ${IN_STOCK} of ${ORDERS} concurrent orders for ${IN_STOCK} units`, async () => {
    const group = `${stack.topicPrefix}inventory`;
    const admin = kafka.admin();
    await admin.connect();
    try {
      await eventually('both inventory processes are in the group', async () => {
        const { groups } = await admin.describeGroups([group]);
        const [described] = groups;
        return described?.state === 'Stable' && described.members.length === 2 ? described : undefined;
      });
    } finally {
      await admin.disconnect();
    }

    const started = Date.now();
    const ids: string[] = [];
    for (let wave = 0; wave < ORDERS / WAVE; wave += 1) {
      const responses = await Promise.all(
        Array.from({ length: WAVE }, (_, i) => postOrder(`rush-${wave * WAVE + i}`)),
      );
      for (const res of responses) {
        expect(res.status).toBe(201);
        ids.push(((await res.json()) as { id: string }).id);
      }
    }
    const placed = Date.now();

    const decided = await eventually(
      'every order is decided',
      async () => {
        const counts = await countBy(
          stack.databases.orders.url,
          'select status, count(*) from orders group by status',
        );
        return !counts.PENDING && (counts.CONFIRMED ?? 0) + (counts.CANCELLED ?? 0) === ORDERS
          ? counts
          : undefined;
      },
      150_000,
    );
    const allDecided = Date.now();
    expect(decided).toEqual({ CONFIRMED: IN_STOCK, CANCELLED: ORDERS - IN_STOCK });

    // Stock: all of it reserved, none more (the check constraint would refuse a negative anyway).
    const [stock] = await queryOnce<{ available: number }>(
      stack.databases.inventory.url,
      'select available from stock where sku = $1',
      [SKU],
    );
    expect(stock?.available).toBe(0);
    expect(
      await countBy(
        stack.databases.inventory.url,
        'select status, count(*) from reservations group by status',
      ),
    ).toEqual({ RESERVED: IN_STOCK, REJECTED: ORDERS - IN_STOCK });
    const [reserved] = await queryOnce<{ units: string }>(
      stack.databases.inventory.url,
      `select sum(quantity) as units from reservation_items where sku = $1`,
      [SKU],
    );
    expect(Number(reserved?.units)).toBe(IN_STOCK);

    // The confirmed orders are exactly the reserved ones; the cancelled ones were short of stock.
    const confirmed = await queryOnce<{ id: string }>(
      stack.databases.orders.url,
      `select id from orders where status = 'CONFIRMED' order by id`,
    );
    const reservedIds = await queryOnce<{ order_id: string }>(
      stack.databases.inventory.url,
      `select order_id from reservations where status = 'RESERVED' order by order_id`,
    );
    expect(confirmed.map((row) => row.id)).toEqual(reservedIds.map((row) => row.order_id));
    const reasons = await queryOnce<{ cancel_reason: string; count: string }>(
      stack.databases.orders.url,
      `select cancel_reason, count(*) from orders where status = 'CANCELLED' group by cancel_reason`,
    );
    expect(reasons).toEqual([
      {
        cancel_reason: `insufficient stock for ${SKU}: wanted 1, available 0`,
        count: String(ORDERS - IN_STOCK),
      },
    ]);

    // Billing authorized every order, then voided the cancelled ones' authorizations.
    const payments = await eventually(
      'billing voided the cancelled orders',
      async () => {
        const counts = await countBy(
          stack.databases.billing.url,
          'select status, count(*) from payments group by status',
        );
        return (counts.VOIDED ?? 0) >= ORDERS - IN_STOCK ? counts : undefined;
      },
      60_000,
    );
    expect(payments).toEqual({ AUTHORIZED: IN_STOCK, VOIDED: ORDERS - IN_STOCK });
    const authorized = await queryOnce<{ order_id: string }>(
      stack.databases.billing.url,
      `select order_id from payments where status = 'AUTHORIZED' order by order_id`,
    );
    expect(authorized.map((row) => row.order_id)).toEqual(confirmed.map((row) => row.id));
    expect(new Set(ids).size).toBe(ORDERS);

    // Both inventory processes took part: between them they applied every ORDER_CREATED and
    // every ORDER_CANCELLED (a rejected order's cancellation holds nothing to release), once.
    const applied = await eventually(
      'inventory consumed every ORDER_CANCELLED',
      async () => {
        const first = (await consumerHealth(stack, 'inventory')).applied;
        const second = (
          (await (await fetch(`${secondInventory?.url}/healthz`)).json()) as { applied: number }
        ).applied;
        return first + second >= ORDERS + (ORDERS - IN_STOCK) ? [first, second] : undefined;
      },
      30_000,
    );
    expect(applied[0]).toBeGreaterThan(0);
    expect(applied[1]).toBeGreaterThan(0);
    expect((applied[0] ?? 0) + (applied[1] ?? 0)).toBe(ORDERS + (ORDERS - IN_STOCK));
    expect(
      await countBy(
        stack.databases.inventory.url,
        'select event_type as status, count(*) from processed_events group by event_type',
      ),
    ).toEqual({ ORDER_CREATED: ORDERS, ORDER_CANCELLED: ORDERS - IN_STOCK });

    console.log(
      `${ORDERS} orders placed in ${placed - started} ms, all decided after ${allDecided - started} ms, ` +
        `compensated after ${Date.now() - started} ms; inventory processes applied ${applied[0]} and ${applied[1]}`,
    );
  }, 200_000);
});
