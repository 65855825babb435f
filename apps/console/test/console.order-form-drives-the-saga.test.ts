// The console's order form against the whole system (three services, three relays, the shared
// broker) in a real Chromium: what a newcomer does first, and what they should see.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console.ts';
import { openConsole, screenshot } from './browser.ts';
import { CONSOLE_TOKEN, relayAdminEnv, startConsoleFor } from './consoleStack.ts';

useLeakGuard();

let stack: Stack;
let consoleApp: RunningConsole;
let browser: Browser;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  stack = await startStack('consoleform', sharedKafkaBrokers(), relayAdminEnv);
  consoleApp = await startConsoleFor(stack, sharedKafkaBrokers());
  ({ browser, page, errors: pageErrors } = await openConsole(consoleApp.url, CONSOLE_TOKEN));
  await page.locator('#order-items input[name="sku"]').first().waitFor();
});

afterAll(async () => {
  await browser?.close();
  await consoleApp?.close();
  await stack?.stop();
});

/** Fill the form (one item) and submit it; resolves with the new order's id. */
async function placeOrder(customerId: string, sku: string, quantity: string): Promise<string> {
  await page.locator('#order-result').evaluate((element) => element.replaceChildren());
  await page.fill('input[name="customerId"]', customerId);
  await page.fill('input[name="currency"]', 'EUR');
  await page.fill('#order-items input[name="sku"]', sku);
  await page.fill('#order-items input[name="quantity"]', quantity);
  await page.click('button[type="submit"]');
  const accepted = page.locator('#order-result [data-order-id]');
  await accepted.waitFor({ timeout: 10_000 });
  const id = await accepted.getAttribute('data-order-id');
  if (!id) throw new Error('the form showed no order id');
  return id;
}

const statusOf = (id: string) => page.locator(`#orders-body tr[data-order-id="${id}"] [data-field="status"]`);

const orderCount = async () =>
  (
    await queryOnce<{ count: number }>(
      stack.databases.orders.url,
      'select count(*)::int as count from orders',
    )
  )[0]?.count;

describe('the order form', () => {
  it('places a valid order that reaches CONFIRMED on screen, its events shown published', async () => {
    const id = await placeOrder('alice-console', 'KB-101', '1');
    await statusOf(id).filter({ hasText: 'CONFIRMED' }).waitFor({ timeout: 60_000 });

    // The order's own events in the orders outbox: ORDER_CREATED, then ORDER_CONFIRMED.
    const published = page.locator(
      `[data-service="orders"] tr[data-aggregate-id="${id}"][data-status="published"]`,
    );
    await expect.poll(() => published.count(), { timeout: 15_000 }).toBe(2);
    // Inventory's and billing's replies went through their own outboxes.
    for (const service of ['inventory', 'billing']) {
      await page
        .locator(`[data-service="${service}"] tr[data-aggregate-id="${id}"][data-status="published"]`)
        .first()
        .waitFor({ timeout: 15_000 });
    }
    const [order] = await queryOnce<{ status: string }>(
      stack.databases.orders.url,
      'select status from orders where id = $1',
      [id],
    );
    expect(order?.status).toBe('CONFIRMED');
    await screenshot(page, 'console-order-confirmed');
  });

  it('shows an order for more stock than exists CANCELLED, with the reason', async () => {
    // 21 monitors: more than the 20 in stock.
    const id = await placeOrder('bob-console', 'MN-303', '21');
    await statusOf(id).filter({ hasText: 'CANCELLED' }).waitFor({ timeout: 60_000 });
    const reason = page.locator(`#orders-body tr[data-order-id="${id}"] [data-field="cancel-reason"]`);
    await expect
      .poll(() => reason.textContent(), { timeout: 5000 })
      .toContain('insufficient stock for MN-303');
    await screenshot(page, 'console-order-cancelled');
  });

  // Before the validation test: Chromium logs every 4xx answer as a console error, as it should.
  it('logs no error in the browser console while orders are placed and followed', () => {
    expect(pageErrors).toEqual([]);
  });

  // After the no-error test: the lost answer below is a 503, which Chromium logs.
  it('sends one Idempotency-Key per order, the same on its retry: an answer lost after the commit makes no second order', async () => {
    const keys: string[] = [];
    let lose = true;
    await page.route('**/api/orders', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      keys.push(route.request().headers()['idempotency-key'] ?? '(none)');
      const response = await route.fetch(); // the order reaches the API and is committed…
      if (!lose) return route.fulfill({ response });
      lose = false; // …but the page never hears it: it gets a 503 instead
      await route.fulfill({
        status: 503,
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'urn:problem:commit-outcome-unknown', title: 'Lost', status: 503 }),
      });
    });
    let id: string | null;
    try {
      await page.locator('#order-result').evaluate((element) => element.replaceChildren());
      await page.fill('input[name="customerId"]', 'carol-retries');
      await page.fill('input[name="currency"]', 'EUR');
      await page.fill('#order-items input[name="sku"]', 'KB-101');
      await page.fill('#order-items input[name="quantity"]', '1');
      await page.click('button[type="submit"]');
      await page.locator('#order-result [data-retry="same-key"]').waitFor({ timeout: 10_000 });
      await page.click('button[type="submit"]'); // the user places the same order again
      const accepted = page.locator('#order-result [data-order-id]');
      await accepted.waitFor({ timeout: 10_000 });
      expect(await accepted.textContent()).toContain('a replay');
      id = await accepted.getAttribute('data-order-id');
    } finally {
      await page.unroute('**/api/orders');
    }
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(keys[1]).toBe(keys[0]);
    const keyOf = async (orderId: string | null) =>
      (
        await queryOnce<{ key: string }>(
          stack.databases.orders.url,
          'select key from idempotency_keys where order_id = $1',
          [orderId],
        )
      )[0]?.key;
    expect(await keyOf(id)).toBe(keys[0]);
    const [carol] = await queryOnce<{ count: number }>(
      stack.databases.orders.url,
      "select count(*)::int as count from orders where customer_id = 'carol-retries'",
    );
    expect(carol?.count).toBe(1);

    // Once answered, the same form contents are a new order, with a key of its own.
    const next = await placeOrder('carol-retries', 'KB-101', '1');
    expect(next).not.toBe(id);
    expect(await keyOf(next)).toMatch(/^[0-9a-f]{32}$/);
    expect(await keyOf(next)).not.toBe(keys[0]);
  });

  it('places no order without the console admin token: 401, nothing written', async () => {
    const before = await orderCount();
    const order = { customerId: 'mallory', currency: 'EUR', items: [{ sku: 'KB-101', quantity: 1 }] };
    for (const token of [undefined, 'not-the-token', `${CONSOLE_TOKEN}x`]) {
      const res = await fetch(`${consoleApp.url}/api/orders`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(order),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    expect(await orderCount()).toBe(before);
  });

  it('shows each validation error next to its field and creates no order', async () => {
    const before = await orderCount();
    await page.fill('input[name="customerId"]', '');
    await page.fill('input[name="currency"]', 'euro');
    await page.fill('#order-items input[name="sku"]', 'KB-101');
    await page.fill('#order-items input[name="quantity"]', '0');
    await page.click('button[type="submit"]');

    const errorFor = (pointer: string) => page.locator(`[data-error-for="${pointer}"]`);
    await expect.poll(() => errorFor('#/customerId').textContent(), { timeout: 10_000 }).not.toBe('');
    expect(await errorFor('#/currency').textContent()).toContain('ISO 4217');
    expect(await errorFor('#/items/0/quantity').textContent()).not.toBe('');
    expect(await errorFor('#/items/0/sku').textContent()).toBe('');
    expect(await page.locator('input.invalid').count()).toBe(3);
    expect(await page.locator('#order-result').textContent()).toContain('400');
    await screenshot(page, 'console-order-form-errors');

    expect(await orderCount()).toBe(before);
  });
});
