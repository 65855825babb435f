// SIGTERM mid-stream (a deploy, a scale-down): the consumer finishes the event in hand, commits its
// offset, leaves the group and exits 0. Its successor then starts exactly where it stopped: no event
// is delivered to it again (0 duplicates skipped, unlike after a kill -9) and none is lost.
import { setTimeout as sleep } from 'node:timers/promises';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerHealth, placeOrder } from './support.ts';

useLeakGuard();

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('consumerterm', sharedKafkaBrokers());
});
afterAll(() => stack?.stop());

const ORDERS = 40;

describe('a consumer on SIGTERM', () => {
  it('exits 0 after committing what it applied: its successor gets no event twice and misses none', {
    timeout: 120_000,
  }, async () => {
    const ids: string[] = [];
    const placing = (async () => {
      for (let i = 0; i < ORDERS; i++) {
        ids.push(await placeOrder(stack, `term-${i}`, [{ sku: 'KB-101', quantity: 1 }]));
        await sleep(50);
      }
    })();

    // Stop inventory while orders keep arriving, once it has applied some.
    await eventually('inventory applied some orders', async () => {
      const health = await consumerHealth(stack, 'inventory');
      return health.applied >= 5 || undefined;
    });
    const inventory = stack.services.inventory;
    const exit = inventory.exited();
    await inventory.stop();
    expect(await exit).toEqual({ code: 0, signal: null });
    await placing;

    await stack.restart('inventory');
    await eventually(
      'every order confirmed',
      async () => {
        const [row] = await queryOnce<{ confirmed: number }>(
          stack.databases.orders.url,
          `select count(*)::int as confirmed from orders where id = any($1::uuid[]) and status = 'CONFIRMED'`,
          [ids],
        );
        return row?.confirmed === ORDERS || undefined;
      },
      60_000,
    );

    // The successor's counters start at zero: what it saw is exactly what was left.
    const successor = await consumerHealth(stack, 'inventory');
    expect(successor.duplicates).toBe(0);
    expect(successor.applied).toBeGreaterThan(0);
    const [effects] = await queryOnce<{ reservations: number; processed: number }>(
      stack.databases.inventory.url,
      `select (select count(*)::int from reservations where order_id = any($1::uuid[])) as reservations,
              (select count(*)::int from processed_events where event_type = 'ORDER_CREATED') as processed`,
      [ids],
    );
    expect(effects).toEqual({ reservations: ORDERS, processed: ORDERS });
  });
});
