// One order's path across the system, hop by hop, as the console assembles it: from the three
// outboxes and inboxes of a real stack, enriched with the order's trace read back from a real
// Zipkin, and drawn in a real Chromium when the order's row is clicked. Without Zipkin the
// timeline keeps the databases' times and says the trace is unavailable; while Zipkin is down, the
// page says "traces unavailable" where the trace links were.
import { join } from 'node:path';
import { freePort } from '@outbox/devstack/ports';
import { RELAYS, SERVICES } from '@outbox/devstack/stack-plan';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { ZipkinServer } from '@outbox/devstack/zipkin-server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console.ts';
import type { OrdersResponse } from '../src/shared/apiTypes.ts';
import type { OrderTimeline, TimelineStep } from '../src/shared/timeline.ts';
import { openConsole, screenshot, screenshotDir } from './browser.ts';
import { startConsoleFor } from './consoleStack.ts';

useLeakGuard();

let zipkin: ZipkinServer;
let stack: Stack;
let traced: RunningConsole;
let untraced: RunningConsole;
let browser: Browser;
let page: Page;
let orderId: string;

beforeAll(async () => {
  zipkin = new ZipkinServer({ name: `timeline-test-${process.pid}`, port: await freePort() });
  await zipkin.start();
  await zipkin.waitUntilReady(90_000);
  // As in the demo: every process exports its spans to Zipkin. The orders API trusts a caller's
  // traceparent here (as behind a gateway), so a test can place an order sampled out upstream.
  const tracing = Object.fromEntries([...SERVICES, ...RELAYS].map((name) => [name, zipkin.tracingEnv(name)]));
  tracing.orders = { ...tracing.orders, TRACING_TRUST_INCOMING_TRACEPARENT: 'true' };
  stack = await startStack('timeline', sharedKafkaBrokers(), tracing);
  traced = await startConsoleFor(stack, sharedKafkaBrokers(), {
    env: { ZIPKIN_URL: zipkin.url, TRACE_URL_TEMPLATE: zipkin.traceUrlTemplate },
  });
  untraced = await startConsoleFor(stack, sharedKafkaBrokers());
  orderId = await placeConfirmedOrder();
});

afterAll(async () => {
  await browser?.close();
  await traced?.close();
  await untraced?.close();
  await stack?.stop();
  await zipkin?.stop();
});

/** `traceparent`: the caller's context, e.g. one that was sampled out upstream (flag 00). */
async function placeConfirmedOrder(traceparent?: string): Promise<string> {
  const res = await fetch(`${stack.services.orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(traceparent ? { traceparent } : {}) },
    body: JSON.stringify({
      customerId: 'timeline',
      currency: 'EUR',
      items: [{ sku: 'KB-101', quantity: 1 }],
    }),
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  await eventually(
    `order ${id} CONFIRMED`,
    async () => {
      const order = (await (await fetch(`${stack.services.orders.url}/orders/${id}`)).json()) as {
        status: string;
      };
      return order.status === 'CONFIRMED' ? true : undefined;
    },
    60_000,
  );
  return id;
}

const timelineOf = async (app: RunningConsole, id: string) => {
  const res = await fetch(`${app.url}/api/orders/${id}/timeline`);
  return { status: res.status, body: (await res.json()) as OrderTimeline };
};

const timeOf = (step: TimelineStep | undefined) => Date.parse(step?.at ?? 'missing');

describe("an order's timeline", () => {
  it('has every hop of a confirmed order in causal order, with non-negative delays and their spans', async () => {
    // The consumers of ORDER_CONFIRMED export their spans last, within about half a second.
    const timeline = await eventually(
      'every hop of the order in the timeline, claims included',
      async () => {
        const { body } = await timelineOf(traced, orderId);
        // Complete once every hop has its time and every publish and apply its span: each process
        // exports its spans in batches of its own, so the trace fills in over a moment.
        const complete =
          body.trace.available &&
          body.events.length === 4 &&
          body.events.every((event) =>
            event.steps.every(
              (step) =>
                step.at !== null && (step.kind === 'committed' || step.kind === 'claimed' || step.span),
            ),
          );
        return complete ? body : undefined;
      },
      30_000,
    );
    expect(timeline.status).toBe('CONFIRMED');
    expect(timeline.traceUrl).toMatch(new RegExp(`^${zipkin.url}/zipkin/traces/[0-9a-f]{32}$`));
    const [created, ...rest] = timeline.events;
    expect(created?.eventType).toBe('ORDER_CREATED');
    expect(rest.at(-1)?.eventType).toBe('ORDER_CONFIRMED');
    expect(
      rest
        .slice(0, 2)
        .map((event) => event.eventType)
        .sort(),
    ).toEqual(['PAYMENT_AUTHORIZED', 'STOCK_RESERVED']);

    const byId = new Map(timeline.events.map((event) => [event.eventId, event]));
    const position = (id: string | undefined) => timeline.events.findIndex((event) => event.eventId === id);
    for (const event of timeline.events) {
      const kinds = event.steps.map((step) => `${step.kind} ${step.actor}`);
      const relay = `relay-${event.outbox}`;
      expect(kinds.slice(0, 3)).toEqual([
        `committed ${event.outbox}`,
        `claimed ${relay}`,
        `published ${relay}`,
      ]);
      expect(kinds.slice(3)).toEqual(event.appliedBy.map((service) => `applied ${service}`));
      // Every hop but the order's own commit has a delay, and none is negative.
      for (const [index, step] of event.steps.entries()) {
        if (event.eventType === 'ORDER_CREATED' && index === 0) expect(step.delayMs).toBeNull();
        else expect(step.delayMs, `${event.eventType} ${step.kind}`).toBeGreaterThanOrEqual(0);
      }
      // Committed, then claimed (the trace), then published (the row's mark): the clock agrees.
      const [committed, claimed, published, ...applied] = event.steps;
      expect(timeOf(claimed)).toBeGreaterThanOrEqual(timeOf(committed));
      expect(timeOf(published)).toBeGreaterThanOrEqual(timeOf(claimed));
      for (const step of applied) expect(timeOf(step)).toBeGreaterThanOrEqual(timeOf(claimed));
      expect(published?.span?.name).toBe(`${relay}: publish ${stack.topicPrefix}${topicOf(event.outbox)}`);
      for (const step of applied) expect(step.span?.name).toMatch(new RegExp(`^${step.actor}: process `));
      // Each reply comes after the event whose handling wrote it.
      const cause = event.causedBy ? byId.get(event.causedBy) : undefined;
      if (event.eventType !== 'ORDER_CREATED') {
        expect(cause, event.eventType).toBeDefined();
        expect(position(event.eventId)).toBeGreaterThan(position(cause?.eventId));
        expect(timeOf(event.steps[0])).toBeGreaterThanOrEqual(timeOf(cause?.steps[0]));
      }
    }
    expect(created?.appliedBy.sort()).toEqual(['billing', 'inventory']);
    expect(rest.at(-1)?.appliedBy).toEqual([]);
    expect(timeline.slowest?.delayMs).toBeGreaterThan(0);
    expect(timeline.decision).toMatchObject({ eventType: 'ORDER_CONFIRMED' });
    expect(timeline.decision?.afterMs).toBeGreaterThan(0);
  });

  it('keeps the database times without Zipkin, and says the trace is unavailable', async () => {
    const { status, body } = await timelineOf(untraced, orderId);
    expect(status).toBe(200);
    expect(body.trace).toMatchObject({ available: false });
    expect(body.trace.available ? '' : body.trace.reason).toContain('ZIPKIN_URL');
    expect(body.events).toHaveLength(4);
    for (const event of body.events) {
      for (const step of event.steps) {
        if (step.kind === 'claimed') expect(step).toMatchObject({ at: null, source: null });
        else expect(step).toMatchObject({ source: 'database' });
      }
    }
  });

  it('answers 404 for an unknown order and 400 for an id that is not a UUID', async () => {
    const unknown = await fetch(`${traced.url}/api/orders/00000000-0000-4000-8000-000000000000/timeline`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');
    expect((await fetch(`${traced.url}/api/orders/not-a-uuid/timeline`)).status).toBe(400);
  });

  it('shows the timeline of a clicked order, its slowest hop and a link to the full trace', async () => {
    ({ browser, page } = await openConsole(traced.url));
    await page.click(`#orders-body tr[data-order-id="${orderId}"] td`);
    const box = page.locator(`#order-timeline[data-order-id="${orderId}"]`);
    await box.waitFor();
    for (const type of ['ORDER_CREATED', 'STOCK_RESERVED', 'PAYMENT_AUTHORIZED', 'ORDER_CONFIRMED']) {
      await box.locator(`[data-event-type="${type}"]`).waitFor();
    }
    const created = box.locator('[data-event-type="ORDER_CREATED"]');
    expect(
      await created.locator('[data-step]').evaluateAll((items) => items.map((item) => item.textContent)),
    ).toEqual([
      expect.stringMatching(/^committed/),
      expect.stringMatching(/^claimed by relay-orders\d/),
      expect.stringMatching(/^published\d/),
      expect.stringMatching(/^(inventory|billing) applied\d/),
      expect.stringMatching(/^(inventory|billing) applied\d/),
    ]);
    await expect.poll(() => box.locator('[data-slowest]').count(), { timeout: 30_000 }).toBe(1);
    expect(await box.locator('[data-slowest] [data-field="delay"]').textContent()).toMatch(/ m?s$/);
    expect(await box.locator('a[data-field="trace-link"]').getAttribute('href')).toMatch(
      new RegExp(`^${zipkin.url}/zipkin/traces/[0-9a-f]{32}$`),
    );
    expect(await box.locator('[data-field="decision"]').textContent()).toContain('CONFIRMED');
    expect(await page.locator(`#orders-body tr.selected[data-order-id="${orderId}"]`).count()).toBe(1);
    await screenshot(page, 'console-order-timeline');
    await box.screenshot({ path: join(screenshotDir, 'console-order-timeline-panel.png') });
  });

  it('says "traces unavailable" instead of trace links while Zipkin is down, and links again once it is back', async () => {
    // Continues the page of the test above, whose order is still selected.
    const row = page.locator(`#orders-body tr[data-order-id="${orderId}"]`);
    const box = page.locator(`#order-timeline[data-order-id="${orderId}"]`);
    await expect.poll(() => row.locator('a', { hasText: 'trace' }).count(), { timeout: 30_000 }).toBe(1);
    await zipkin.stop(); // as when it dies: the demo's supervisor restarts it, empty

    await expect
      .poll(() => row.locator('[data-field="traces-unavailable"]').textContent(), { timeout: 30_000 })
      .toBe('traces unavailable');
    expect(await row.locator('a').count()).toBe(0);
    expect(await page.locator('#traces-status').textContent()).toMatch(
      /^Traces unavailable: Zipkin does not answer/,
    );
    await expect
      .poll(() => box.locator('[data-field="trace"]').textContent(), { timeout: 30_000 })
      .toMatch(/^Trace unavailable: Zipkin did not answer/);
    expect(await box.locator('a[data-field="trace-link"]').count()).toBe(0);
    const orders = (await (await fetch(`${traced.url}/api/orders`)).json()) as OrdersResponse;
    expect(orders.traces).toMatchObject({ available: false });
    expect(orders.orders.every((order) => order.traceUrl === undefined)).toBe(true);
    await screenshot(page, 'console-traces-unavailable');

    // Back, empty: the table links again (new orders' traces arrive), and the timeline says this
    // order's trace is gone rather than linking to nothing.
    await zipkin.start();
    await zipkin.waitUntilReady(90_000);
    await expect.poll(() => row.locator('a', { hasText: 'trace' }).count(), { timeout: 30_000 }).toBe(1);
    expect(await page.locator('#traces-status').textContent()).toMatch(/^Each order links to its trace/);
    await expect
      .poll(() => box.locator('[data-field="trace"]').textContent(), { timeout: 30_000 })
      .toMatch(/^Trace unavailable: Zipkin has no trace/);
    expect(await box.locator('a[data-field="trace-link"]').count()).toBe(0);
  }, 180_000); // a JVM restart on a busy machine

  it('says "not traced" for an order that was sampled out, links to no trace, and still shows its timeline', async () => {
    // A trusted caller's traceparent with the sampled flag off: the order is sampled out as one past
    // the rate limit is (docs/tracing.md, "Sampling"), and stays so in every process after orders.
    const sampledOut = await placeConfirmedOrder(`00-${'5a'.repeat(16)}-${'0b'.repeat(8)}-00`);
    // CONFIRMED is seen before ORDER_CONFIRMED has left its outbox: wait until every hop but the
    // claims (which only a trace records) has happened, on a busy machine too.
    const { status, body } = await eventually(
      'every hop of the sampled-out order recorded, claims aside',
      async () => {
        const answer = await timelineOf(traced, sampledOut);
        const recorded = answer.body.events?.every((event) =>
          event.steps.every((step) => step.kind === 'claimed' || step.at !== null),
        );
        return answer.body.events?.length === 4 && recorded ? answer : undefined;
      },
      30_000,
    );
    expect(status).toBe(200);
    expect(body.trace).toMatchObject({ available: false, sampledOut: true });
    expect(body.trace.available ? '' : body.trace.reason).toMatch(/^sampled out under load/);
    expect(body.traceUrl).toBeUndefined();
    expect(body.events).toHaveLength(4);
    for (const event of body.events) {
      for (const step of event.steps) {
        if (step.kind === 'claimed') expect(step.note).toContain('this order was not traced');
        else expect(step).toMatchObject({ source: 'database' });
      }
    }
    const orders = (await (await fetch(`${traced.url}/api/orders`)).json()) as OrdersResponse;
    expect(orders.orders.find((order) => order.id === sampledOut)).toMatchObject({ sampledOut: true });
    expect(orders.orders.find((order) => order.id === sampledOut)?.traceUrl).toBeUndefined();
    expect(orders.orders.find((order) => order.id === orderId)?.traceUrl).toBeDefined();

    const row = page.locator(`#orders-body tr[data-order-id="${sampledOut}"]`);
    // The orders list refreshes on its own schedule: on a busy machine, more than poll's default second.
    await expect
      .poll(() => row.locator('[data-field="not-traced"]').textContent(), { timeout: 30_000 })
      .toBe('not traced');
    expect(await row.locator('a').count()).toBe(0);
    await row.locator('td').first().click();
    const box = page.locator(`#order-timeline[data-order-id="${sampledOut}"]`);
    await box.locator('[data-event-type="ORDER_CONFIRMED"]').waitFor();
    expect(await box.locator('[data-field="trace"]').textContent()).toMatch(
      /^Not traced: sampled out under load/,
    );
    expect(await box.locator('a').count()).toBe(0);
    await screenshot(page, 'console-order-not-traced');
  });
});

/** Each outbox's topic: the aggregate type of its events (docs/events.md). */
function topicOf(service: string): string {
  return (
    { orders: 'order.events', inventory: 'reservation.events', billing: 'payment.events' }[service] ?? ''
  );
}
