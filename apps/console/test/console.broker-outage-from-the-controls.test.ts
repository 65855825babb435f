import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { type Stack, startStack } from '@outbox/devstack/testing/stack';
import { startTestBroker, type TestBroker } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console.ts';
import type { DemoControls } from '../src/demoControlRoutes.ts';
import { brokerControl } from '../src/processControls.ts';
import { openConsole, screenshot } from './browser.ts';
import { CONSOLE_TOKEN, processControlsOf, relayAdminEnv, startConsoleFor } from './consoleStack.ts';

useLeakGuard();

// This file stops its broker, so it runs its own instead of the shared one.
let testBroker: TestBroker;
let stack: Stack;
let consoleApp: RunningConsole;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  testBroker = await startTestBroker('console-outage');
  const brokers = testBroker.broker.brokers;
  stack = await startStack('consoleoutage', brokers, relayAdminEnv);
  const controls: DemoControls = {
    brokers: { broker: brokerControl(testBroker.broker) },
    services: processControlsOf(stack),
  };
  consoleApp = await startConsoleFor(stack, brokers, { controls });
  ({ browser, page } = await openConsole(consoleApp.url, CONSOLE_TOKEN));
  await brokerState().filter({ hasText: 'running' }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  await consoleApp?.close();
  await stack?.stop();
  await testBroker?.dispose();
});

const brokerState = () => page.locator('#demo tr[data-target="broker"] [data-field="state"]');
const ordersStat = async (name: string) =>
  Number(await page.locator(`[data-service="orders"] [data-stat="${name}"]`).getAttribute('data-value'));
const statusOf = (id: string) => page.locator(`#orders-body tr[data-order-id="${id}"] [data-field="status"]`);

async function placeOrder(customerId: string): Promise<string> {
  await page.fill('input[name="customerId"]', customerId);
  await page.fill('#order-items input[name="sku"]', 'MS-202');
  await page.fill('#order-items input[name="quantity"]', '1');
  await page.click('button[type="submit"]');
  const accepted = page.locator('#order-result [data-order-id]');
  await accepted.filter({ hasNotText: 'never' }).waitFor({ timeout: 10_000 });
  const id = await accepted.getAttribute('data-order-id');
  if (!id) throw new Error('the form showed no order id');
  await page.locator('#order-result').evaluate((element) => element.replaceChildren());
  return id;
}

describe('a broker outage caused from the console', { timeout: 180_000 }, () => {
  it('keeps orders pending while the backlog grows, then completes each exactly once', async () => {
    await page.click('#demo tr[data-target="broker"] button[data-action="stop"]');
    await brokerState().filter({ hasText: 'stopped' }).waitFor({ timeout: 30_000 });

    const ids = [await placeOrder('outage-1'), await placeOrder('outage-2'), await placeOrder('outage-3')];

    // The events wait in the orders outbox: the backlog is on screen, and its age grows.
    await expect
      .poll(async () => (await ordersStat('pending')) + (await ordersStat('in-flight')), { timeout: 10_000 })
      .toBeGreaterThanOrEqual(3);
    const oldest = await ordersStat('oldest');
    await expect.poll(() => ordersStat('oldest'), { timeout: 10_000 }).toBeGreaterThanOrEqual(oldest + 2);
    await page
      .locator('[data-service="orders"] [data-field="relay"]')
      .filter({ hasText: 'degraded' })
      .waitFor({ timeout: 30_000 });
    for (const id of ids) expect(await statusOf(id).textContent()).toBe('PENDING');
    await screenshot(page, 'console-broker-stopped');

    await page.click('#demo tr[data-target="broker"] button[data-action="start"]');
    await brokerState().filter({ hasText: 'running' }).waitFor({ timeout: 60_000 });
    for (const id of ids) await statusOf(id).filter({ hasText: 'CONFIRMED' }).waitFor({ timeout: 90_000 });
    await expect.poll(() => ordersStat('pending'), { timeout: 10_000 }).toBe(0);
    await screenshot(page, 'console-broker-restarted');

    // Nothing lost, nothing twice: one reservation, one payment and one confirmation per order.
    const { databases } = stack;
    const perOrder = async (url: string, sql: string) =>
      (await queryOnce<{ id: string; count: number }>(url, sql, [ids])).map((row) => [row.id, row.count]);
    const once = ids.map((id) => [id, 1]).sort();
    expect(
      await perOrder(
        databases.orders.url,
        `select id::text, count(*)::int as count from orders where id = any($1::uuid[]) and status = 'CONFIRMED' group by id order by id`,
      ),
    ).toEqual(once);
    expect(
      await perOrder(
        databases.orders.url,
        `select aggregate_id as id, count(*)::int as count from outbox
          where aggregate_id = any($1::text[]) and event_type = 'ORDER_CONFIRMED' group by 1 order by 1`,
      ),
    ).toEqual(once);
    expect(
      await perOrder(
        databases.inventory.url,
        `select order_id::text as id, count(*)::int as count from reservations
          where order_id = any($1::uuid[]) and status = 'RESERVED' group by 1 order by 1`,
      ),
    ).toEqual(once);
    expect(
      await perOrder(
        databases.billing.url,
        `select order_id::text as id, count(*)::int as count from payments
          where order_id = any($1::uuid[]) and status = 'AUTHORIZED' group by 1 order by 1`,
      ),
    ).toEqual(once);
  });
});
