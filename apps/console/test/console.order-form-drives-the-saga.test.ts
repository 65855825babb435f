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
