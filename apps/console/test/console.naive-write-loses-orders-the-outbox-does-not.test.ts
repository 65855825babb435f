// The lesson of docs/walkthrough.md, "Break the naive way, then the outbox way", in a real
// Chromium against a real stack: from the console alone, switch orders to commit-then-publish,
// kill the broker, place orders and watch them get marked LOST (committed, never announced, PENDING
// for ever); switch back to the outbox, place orders through the same outage, and watch them wait
// and then complete when the broker is back.
import { randomUUID } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { type Stack, startStack } from '@outbox/devstack/testing/stack';
import { startTestBroker, type TestBroker } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console.ts';
import type { DemoControls } from '../src/demoControlRoutes.ts';
import { brokerControl, ordersWriteModeSwitch } from '../src/processControls.ts';
import { openConsole, screenshot } from './browser.ts';
import { CONSOLE_TOKEN, processControlsOf, relayAdminEnv, startConsoleFor } from './consoleStack.ts';

useLeakGuard();

const ORDERS_TOKEN = `orders-${randomUUID()}`;

// This file kills its broker, so it runs its own instead of the shared one.
let testBroker: TestBroker;
let stack: Stack;
let consoleApp: RunningConsole;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  testBroker = await startTestBroker('console-naive');
  const brokers = testBroker.broker.brokers;
  // Orders as the demo starts it: its write mode may be switched, with its own token.
  stack = await startStack('consolenaive', brokers, {
    ...relayAdminEnv,
    orders: { WRITE_MODES_SWITCHABLE: 'true', ORDERS_ADMIN_TOKEN: ORDERS_TOKEN },
  });
  const controls: DemoControls = {
    brokers: { broker: brokerControl(testBroker.broker) },
    services: processControlsOf(stack),
    writeMode: ordersWriteModeSwitch(stack.services.orders.url, ORDERS_TOKEN),
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
const writeMode = () => page.locator('#orders-write-mode [data-field="write-mode"]');
const rowOf = (customerId: string) => page.locator('#orders-body tr[data-order-id]', { hasText: customerId });

async function switchTo(mode: string): Promise<void> {
  await page.click(`#write-mode-switch button[data-write-mode="${mode}"]`);
  await writeMode().filter({ hasText: mode }).waitFor({ timeout: 10_000 });
}

/** Place one MS-202 from the form and wait for the API's answer, whichever it is. */
async function placeOrder(customerId: string): Promise<void> {
  await page.locator('#order-result').evaluate((element) => element.replaceChildren());
  await page.fill('input[name="customerId"]', customerId);
  await page.fill('#order-items input[name="sku"]', 'MS-202');
  await page.fill('#order-items input[name="quantity"]', '1');
  await page.click('button[type="submit"]');
  await page.locator('#order-result :first-child').waitFor({ timeout: 30_000 });
}

describe('the naive write and the outbox, side by side in the console', { timeout: 180_000 }, () => {
  it('switches the write mode only with the admin token', async () => {
    const post = (token?: string) =>
      fetch(`${consoleApp.url}/api/demo/write-mode`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ mode: 'commit-then-publish' }),
      });
    expect((await post()).status).toBe(401);
    expect((await post('not-the-token-at-all')).status).toBe(401);
    expect(await writeMode().textContent()).toBe('outbox');
  });

  it('commit-then-publish loses the orders placed while the broker is dead; the outbox loses none', async () => {
    expect(await writeMode().textContent()).toBe('outbox');
    await switchTo('commit-then-publish');
    await page.click('#demo tr[data-target="broker"] button[data-action="kill"]');
    await brokerState().filter({ hasText: 'stopped' }).waitFor({ timeout: 30_000 });

    // Committed, then the send fails: the API answers an error, but the order exists.
    await placeOrder('naive-1');
    await placeOrder('naive-2');
    for (const customer of ['naive-1', 'naive-2']) {
      await rowOf(customer).locator('[data-field="lost"]').waitFor({ timeout: 30_000 });
      expect(await rowOf(customer).locator('[data-field="status"]').textContent()).toBe('PENDING');
      expect(await rowOf(customer).locator('[data-field="lost-reason"]').textContent()).toMatch(
        /never reached Kafka \(commit-then-publish/,
      );
    }
    await screenshot(page, 'console-naive-write-lost-orders');

    // The same outage with the outbox: the API answers 201 at once and the events wait.
    await switchTo('outbox');
    await placeOrder('outbox-1');
    await placeOrder('outbox-2');
    await page.click('#demo tr[data-target="broker"] button[data-action="start"]');
    await brokerState().filter({ hasText: 'running' }).waitFor({ timeout: 90_000 });
    for (const customer of ['outbox-1', 'outbox-2']) {
      await rowOf(customer)
        .locator('[data-field="status"]', { hasText: 'CONFIRMED' })
        .waitFor({ timeout: 90_000 });
      expect(await rowOf(customer).locator('[data-field="lost"]').count()).toBe(0);
    }
    // The lost ones stay lost: the broker is back, but nothing will ever send their events.
    for (const customer of ['naive-1', 'naive-2']) {
      expect(await rowOf(customer).locator('[data-field="status"]').textContent()).toBe('PENDING');
      expect(await rowOf(customer).locator('[data-field="lost"]').count()).toBe(1);
    }
    await screenshot(page, 'console-outbox-write-none-lost');
  });

  it('marks a ghost: stock reserved and a payment made for an order the orders database does not have', async () => {
    // What publish-then-commit leaves when its transaction fails after the send (the chaos suite
    // makes that happen: dual-write-publish-then-commit); here written straight into the two
    // databases, as inventory and billing would have, to check what the console makes of it.
    const ghost = randomUUID();
    await queryOnce(
      stack.databases.inventory.url,
      `insert into reservations (order_id, status, created_at) values ($1, 'RESERVED', now() - interval '5 seconds')`,
      [ghost],
    );
    await queryOnce(
      stack.databases.billing.url,
      `insert into payments (order_id, event_id, customer_id, currency, amount_cents, status, authorization_id, created_at)
       values ($1, $2, 'ghost', 'EUR', 100, 'AUTHORIZED', 'auth-ghost', now() - interval '5 seconds')`,
      [ghost, randomUUID()],
    );
    const row = page.locator(`#orders-body tr[data-ghost-id="${ghost}"]`);
    await row.waitFor({ timeout: 10_000 });
    expect(await row.locator('[data-field="status"]').textContent()).toBe('GHOST');
    expect(await row.locator('[data-field="ghost-reason"]').textContent()).toMatch(/publish-then-commit/);
    expect(await row.textContent()).toMatch(/stock: reserved.*payment: authorized/);
  });
});
