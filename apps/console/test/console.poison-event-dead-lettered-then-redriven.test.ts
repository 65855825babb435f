// A poison event, seen and handled from the console: the relay dead-letters an event the broker
// refuses, the console lists it with a Redrive button; after a "fix" the redrive publishes it, and
// the consumers, who cannot read the fixed payload either, put it on the dead-letter topic, which
// the console shows too.
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

beforeAll(async () => {
  stack = await startStack('consolepoison', sharedKafkaBrokers(), relayAdminEnv);
  consoleApp = await startConsoleFor(stack, sharedKafkaBrokers());
  ({ browser, page } = await openConsole(consoleApp.url, CONSOLE_TOKEN));
});

afterAll(async () => {
  await browser?.close();
  await consoleApp?.close();
  await stack?.stop();
});

const POISON_ID = '0b9f4a52-6c1e-4c55-9b1a-2f3c4d5e6f70';

describe('a poison event', () => {
  it('is listed dead-lettered, redriven from the console after a fix, and then shown on the dead-letter topic', async () => {
    // ~2 MB: more than the broker accepts, so the relay dead-letters it at once. The API never
    // writes such an event; an operator (or a bug) can.
    await queryOnce(
      stack.databases.orders.url,
      `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
       values ($1::uuid, '/orders', 'order', 'poison-order', 'ORDER_CREATED', 1, jsonb_build_object('note', repeat('x', 2 * 1024 * 1024)))`,
      [POISON_ID],
    );
    const orders = page.locator('[data-service="orders"]');
    const deadLettered = orders.locator(`.failed li[data-event-id="${POISON_ID}"]`);
    await deadLettered.waitFor({ timeout: 30_000 });
    expect(await orders.locator('[data-stat="failed"]').getAttribute('data-value')).toBe('1');
    expect(await deadLettered.textContent()).toContain('larger than the max message size');
    await screenshot(page, 'console-poison-dead-lettered');

    // The "fix": small enough now (though still not a valid ORDER_CREATED).
    await queryOnce(
      stack.databases.orders.url,
      `update outbox set payload = '{"note": "fixed"}' where id = $1`,
      [POISON_ID],
    );
    await deadLettered.locator('button.redrive').click();
    await orders
      .locator(`tr[data-event-id="${POISON_ID}"][data-status="published"]`)
      .waitFor({ timeout: 30_000 });
    const [row] = await queryOnce<{ status: string }>(
      stack.databases.orders.url,
      'select status from outbox where id = $1',
      [POISON_ID],
    );
    expect(row?.status).toBe('published');

    // Inventory and billing cannot read it: each sends it to order.events.dlt with the reason.
    const letters = page.locator('#dead-letters-body tr', { hasText: 'poison-o' });
    await expect.poll(() => letters.count(), { timeout: 30_000 }).toBe(2);
    expect(await letters.first().textContent()).toContain('invalid ORDER_CREATED');
    await screenshot(page, 'console-poison-on-dead-letter-topic');
  });
});
