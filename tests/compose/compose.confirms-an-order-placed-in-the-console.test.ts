import { eventually } from '@outbox/devstack/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsole, screenshot } from '../../apps/console/test/browser.ts';
import {
  composeTestsEnabled,
  consoleAdminToken,
  devCompose,
  json,
  order,
  skipNote,
  urls,
} from './composeStack.ts';

/**
 * The compose smoke: the README's one command (`./dev compose up`) builds the images and starts the
 * stack; an order placed with the console's form, clicked in a real Chromium, reaches CONFIRMED on
 * the page, and one through the orders API does too; Prometheus scrapes every service and evaluates
 * the alert rules; the order's trace is in Zipkin; then `./dev compose down`.
 */

type ConsoleOrder = { id: string; status: string; traceUrl?: string };

describe.skipIf(!composeTestsEnabled)(`the compose stack${skipNote}`, () => {
  beforeAll(() => {
    // A fresh stack, whatever ran before.
    devCompose(['down']);
    devCompose(['up']);
  }, 20 * 60_000);

  afterAll(() => {
    devCompose(['down']);
  }, 5 * 60_000);

  const confirmedInTheConsole = (id: string) =>
    eventually(
      `order ${id} CONFIRMED in the console`,
      async () => {
        const { body } = await json<{ orders: ConsoleOrder[] }>(`${urls.console}/api/orders`);
        const shown = body.orders.find((o) => o.id === id);
        return shown?.status === 'CONFIRMED' ? shown : undefined;
      },
      60_000,
    );

  it('confirms an order placed with the console form in Chromium, and shows its trace from Zipkin', async () => {
    const { browser, page, errors } = await openConsole(urls.console, consoleAdminToken);
    let shown: ConsoleOrder;
    try {
      // The console's own form, as a visitor fills it: the stack's console takes the admin token
      // from the shell that ran `./dev compose up` (composeStack.ts passes the test's).
      await page.locator('#order-items input[name="sku"]').first().waitFor({ timeout: 60_000 });
      await page.fill('input[name="customerId"]', 'console-smoke');
      await page.fill('input[name="currency"]', 'EUR');
      await page.fill('#order-items input[name="sku"]', 'KB-101');
      await page.fill('#order-items input[name="quantity"]', '1');
      await page.click('button[type="submit"]');
      const accepted = page.locator('#order-result [data-order-id]');
      await accepted.waitFor({ timeout: 30_000 });
      const id = await accepted.getAttribute('data-order-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      await page
        .locator(`#orders-body tr[data-order-id="${id}"] [data-field="status"]`)
        .filter({ hasText: 'CONFIRMED' })
        .waitFor({ timeout: 90_000 });
      await screenshot(page, 'compose-console-order-confirmed');
      expect(errors).toEqual([]);
      shown = await confirmedInTheConsole(id ?? '');
    } finally {
      await browser.close();
    }

    // The console links the order's trace; Zipkin holds it, with the saga's services in it.
    const traceId = /\/traces\/([0-9a-f]{32})$/.exec(shown.traceUrl ?? '')?.[1];
    expect(traceId, shown.traceUrl).toBeDefined();
    const services = await eventually(
      'the trace in Zipkin, through billing',
      async () => {
        const res = await fetch(`${urls.zipkin}/api/v2/trace/${traceId}`);
        if (!res.ok) return undefined;
        const spans = (await res.json()) as { localEndpoint?: { serviceName?: string } }[];
        const names = new Set(spans.map((span) => span.localEndpoint?.serviceName));
        return names.has('billing') && names.has('inventory') ? names : undefined;
      },
      30_000,
    );
    expect([...services]).toEqual(expect.arrayContaining(['orders', 'relay-orders', 'inventory', 'billing']));
  }, 180_000);

  it('confirms an order placed through the orders API', async () => {
    const placed = await json<{ id: string }>(`${urls.orders}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(order('api-smoke')),
    });
    expect(placed.status).toBe(201);
    await confirmedInTheConsole(placed.body.id);
  }, 180_000);

  it('has Prometheus scrape every service and evaluate every alert rule group', async () => {
    const jobs = ['orders', 'relay-orders', 'inventory', 'relay-inventory', 'billing', 'relay-billing'];
    await eventually(
      'every target up',
      async () => {
        const { body } = await json<{
          data: { activeTargets: { labels: { job: string }; health: string }[] };
        }>(`${urls.prometheus}/api/v1/targets`);
        const up = body.data.activeTargets.filter((t) => t.health === 'up').map((t) => t.labels.job);
        return jobs.every((job) => up.includes(job)) ? true : undefined;
      },
      60_000,
    );
    const { body } = await json<{
      data: { groups: { name: string; lastEvaluation: string; rules: unknown[] }[] };
    }>(`${urls.prometheus}/api/v1/rules`);
    expect(body.data.groups.length).toBeGreaterThan(0);
    for (const group of body.data.groups) {
      expect(group.rules.length, group.name).toBeGreaterThan(0);
      expect(Date.parse(group.lastEvaluation), group.name).toBeGreaterThan(0);
    }
    // The console reads the same rules inside the network (PROMETHEUS_API_URL), not at the host's port.
    const alerts = await json<{ rules: string[]; error?: string }>(`${urls.console}/api/alerts`);
    expect(alerts.body.error).toBeUndefined();
    expect(alerts.body.rules.length).toBeGreaterThan(0);
  }, 180_000);
});
