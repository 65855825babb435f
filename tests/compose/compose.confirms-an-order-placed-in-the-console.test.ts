import { eventually } from '@outbox/devstack/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
 * stack; an order placed in the console and one through the orders API reach CONFIRMED; Prometheus
 * scrapes every service and evaluates the alert rules; the order's trace is in Zipkin; then
 * `./dev compose down`. The console's form posts to POST /api/orders with the admin token, as here.
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

  it('confirms an order placed in the console, and shows its trace from Zipkin', async () => {
    const placed = await json<{ id: string }>(`${urls.console}/api/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${consoleAdminToken}` },
      body: JSON.stringify(order('console-smoke')),
    });
    expect(placed.status).toBe(201);
    const shown = await confirmedInTheConsole(placed.body.id);

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
  }, 180_000);
});
