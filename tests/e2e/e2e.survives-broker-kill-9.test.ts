import type { KafkaBroker } from '@outbox/devstack/kafka-broker';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { startTestBroker, type TestBroker } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

// This file kills its broker, so it runs its own instead of the shared one.
let testBroker: TestBroker;
let broker: KafkaBroker;
let stack: Stack;

beforeAll(async () => {
  testBroker = await startTestBroker('broker-kill');
  broker = testBroker.broker;
  stack = await startStack('brokerkill', broker.brokers);
});

afterAll(async () => {
  await stack?.stop();
  await testBroker?.dispose();
});

async function placeOrder(customerId: string): Promise<string> {
  const res = await fetch(`${stack.services.orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId, currency: 'EUR', items: [{ sku: 'MS-202', quantity: 1 }] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const recordedBy = (url: string, table: 'reservations' | 'payments', orderId: string) =>
  eventually(
    `${table} has order ${orderId}`,
    async () => (await queryOnce(url, `select 1 from ${table} where order_id = $1`, [orderId]))[0],
    90_000,
  );

describe('broker killed with kill -9', () => {
  it('delivers an order placed while the broker was down once it is back', async () => {
    // The path works before the outage...
    const before = await placeOrder('before-outage');
    await recordedBy(stack.databases.inventory.url, 'reservations', before);

    const pid = broker.pid;
    await broker.kill();
    expect(broker.isRunning()).toBe(false);
    // kill() returns once the JVM is dead; its pid is freed once this process has reaped it, which a
    // loaded machine may take a moment to do.
    await eventually(
      `the broker JVM (pid ${pid}) is reaped`,
      async () => {
        try {
          process.kill(pid ?? -1, 0);
          return undefined;
        } catch {
          return true;
        }
      },
      10_000,
    );

    // ...the orders API keeps accepting orders while Kafka is gone: the event waits in the outbox.
    const during = await placeOrder('during-outage');
    // The relay notices (its bounded producer retries run out) and says so on /healthz.
    await eventually(
      'relay reports degraded',
      async () => {
        const health = (await (await fetch(`${stack.services['relay-orders'].url}/healthz`)).json()) as {
          status: string;
        };
        return health.status === 'degraded' ? health : undefined;
      },
      30_000,
    );
    const [pending] = await queryOnce<{ status: string }>(
      stack.databases.orders.url,
      'select status from outbox where aggregate_id = $1',
      [during],
    );
    expect(pending?.status).not.toBe('published');

    await broker.start();
    await broker.waitUntilReady(120_000);

    await recordedBy(stack.databases.inventory.url, 'reservations', during);
    await recordedBy(stack.databases.billing.url, 'payments', during);
    // Once each, whatever the relay and consumers retried during the outage.
    for (const [url, table] of [
      [stack.databases.inventory.url, 'reservations'],
      [stack.databases.billing.url, 'payments'],
    ] as const) {
      const rows = await queryOnce(url, `select order_id from ${table} where order_id = any($1::uuid[])`, [
        [before, during],
      ]);
      expect(rows).toHaveLength(2);
    }
  });
});
