import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console.ts';
import type { DemoControls } from '../src/demoControlRoutes.ts';
import { openConsole, screenshot } from './browser.ts';
import { CONSOLE_TOKEN, processControlsOf, relayAdminEnv, startConsoleFor } from './consoleStack.ts';

useLeakGuard();

let stack: Stack;
let consoleApp: RunningConsole;
let browser: Browser;
let page: Page;

/** A broker control that is never used here: this file only breaks services (the shared broker stays up). */
const untouchableBroker = {
  isRunning: () => true,
  stop: () => Promise.reject(new Error('not in this test')),
  kill: () => Promise.reject(new Error('not in this test')),
  start: () => Promise.reject(new Error('not in this test')),
};

beforeAll(async () => {
  const brokers = sharedKafkaBrokers();
  stack = await startStack('consolekill', brokers, relayAdminEnv);
  const controls: DemoControls = {
    brokers: { broker: untouchableBroker },
    services: processControlsOf(stack),
  };
  consoleApp = await startConsoleFor(stack, brokers, { controls });
  ({ browser, page } = await openConsole(consoleApp.url, CONSOLE_TOKEN));
  await stateOf('inventory').filter({ hasText: 'running' }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  await consoleApp?.close();
  await stack?.stop();
});

const stateOf = (target: string) => page.locator(`#demo tr[data-target="${target}"] [data-field="state"]`);
const statusOf = (id: string) => page.locator(`#orders-body tr[data-order-id="${id}"] [data-field="status"]`);

async function placeOrder(customerId: string): Promise<string> {
  await page.fill('input[name="customerId"]', customerId);
  await page.fill('#order-items input[name="sku"]', 'KB-101');
  await page.fill('#order-items input[name="quantity"]', '1');
  await page.click('button[type="submit"]');
  const accepted = page.locator('#order-result [data-order-id]');
  await accepted.filter({ hasNotText: 'never' }).waitFor({ timeout: 10_000 });
  const id = await accepted.getAttribute('data-order-id');
  if (!id) throw new Error('the form showed no order id');
  return id;
}

describe('a consumer service killed and started from the console', () => {
  it('leaves its orders PENDING while it is down, then completes each once', async () => {
    const inventoryPid = stack.services.inventory.pid;
    await page.click('#demo tr[data-target="inventory"] button[data-action="kill"]');
    await stateOf('inventory').filter({ hasText: 'stopped' }).waitFor({ timeout: 30_000 });
    expect(stack.services.inventory.pid).toBeUndefined();
    await page.locator('#demo-message').filter({ hasText: 'kill -9 of a consumer' }).waitFor();

    const id = await placeOrder('consumer-down');
    // Billing answers, inventory cannot: the order waits for it.
    await page
      .locator(`#orders-body tr[data-order-id="${id}"]`)
      .filter({ hasText: 'payment: authorized' })
      .waitFor({ timeout: 30_000 });
    expect(await statusOf(id).textContent()).toBe('PENDING');
    await screenshot(page, 'console-inventory-killed');

    await page.click('#demo tr[data-target="inventory"] button[data-action="start"]');
    await stateOf('inventory').filter({ hasText: 'running' }).waitFor({ timeout: 60_000 });
    expect(stack.services.inventory.pid).not.toBe(inventoryPid);
    await statusOf(id).filter({ hasText: 'CONFIRMED' }).waitFor({ timeout: 60_000 });
    await screenshot(page, 'console-inventory-restarted');

    const reservations = await queryOnce<{ count: number }>(
      stack.databases.inventory.url,
      `select count(*)::int as count from reservations where order_id = $1::uuid`,
      [id],
    );
    expect(reservations).toEqual([{ count: 1 }]);
  });
});
