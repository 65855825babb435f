// What `./dev demo` shows without Docker, in a real Chromium: live charts drawn from a real
// Prometheus with the dashboards' PromQL, an order's link opening its trace in a real Zipkin with
// spans from every service, and the real alert rules firing on the page while the broker is dead
// and clearing once it is back. Without Prometheus or Zipkin, the page says what is missing.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@outbox/devstack/ports';
import { alertRulesFile } from '@outbox/devstack/prometheus-config';
import { RELAYS, SERVICES } from '@outbox/devstack/stack-plan';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { startPrometheus, type TestPrometheus } from '@outbox/devstack/testing/prometheus';
import { type Stack, startStack } from '@outbox/devstack/testing/stack';
import { startTestBroker, type TestBroker } from '@outbox/devstack/testing/test-broker';
import { ZipkinServer } from '@outbox/devstack/zipkin-server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningConsole } from '../src/console.ts';
import type { DemoControls } from '../src/demoControlRoutes.ts';
import { brokerControl } from '../src/processControls.ts';
import { openConsole, screenshot, screenshotDir } from './browser.ts';
import { CONSOLE_TOKEN, processControlsOf, relayAdminEnv, startConsoleFor } from './consoleStack.ts';

useLeakGuard();

const PROCESSES = [...SERVICES, ...RELAYS];

/**
 * Where the browser would reach Prometheus, and the console cannot (as in docker compose, where the
 * console reads `prometheus:9090` and the page links to the host's port): the charts and alerts
 * below work only if the console reads PROMETHEUS_API_URL.
 */
const PROMETHEUS_LINK = 'http://prometheus.invalid:9090';

// This file kills its broker, so it runs its own.
let testBroker: TestBroker;
let zipkin: ZipkinServer;
let stack: Stack;
let prometheus: TestPrometheus;
let consoleApp: RunningConsole;
let browser: Browser;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  zipkin = new ZipkinServer({ name: `console-test-${process.pid}`, port: await freePort() });
  await zipkin.start(); // its JVM boots while the broker does
  testBroker = await startTestBroker('console-live');
  const brokers = testBroker.broker.brokers;
  await zipkin.waitUntilReady(90_000);
  // As in the demo: tracing on, every process exporting to Zipkin.
  stack = await startStack(
    'consolelive',
    brokers,
    Object.fromEntries(
      PROCESSES.map((name) => [name, { ...relayAdminEnv[name], ...zipkin.tracingEnv(name) }]),
    ),
  );
  prometheus = await startPrometheus(
    Object.fromEntries(PROCESSES.map((name) => [name, stack.services[name].port])),
    [alertRulesFile],
  );
  const controls: DemoControls = {
    brokers: { broker: brokerControl(testBroker.broker) },
    services: processControlsOf(stack),
  };
  consoleApp = await startConsoleFor(stack, brokers, {
    controls,
    env: {
      PROMETHEUS_URL: PROMETHEUS_LINK,
      PROMETHEUS_API_URL: prometheus.url,
      ZIPKIN_URL: zipkin.url,
      TRACE_URL_TEMPLATE: zipkin.traceUrlTemplate,
    },
  });
  ({ browser, page, errors: pageErrors } = await openConsole(consoleApp.url, CONSOLE_TOKEN));
});

afterAll(async () => {
  await browser?.close();
  await consoleApp?.close();
  await prometheus?.stop();
  await stack?.stop();
  await zipkin?.stop();
  await testBroker?.dispose();
});

async function placeOrder(customerId: string): Promise<string> {
  const res = await fetch(`${stack.services.orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId, currency: 'EUR', items: [{ sku: 'CB-505', quantity: 1 }] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const chart = (id: string) => page.locator(`[data-chart="${id}"]`);
const chartNumber = async (id: string, field: 'points' | 'max' | 'latestMax') =>
  Number(
    (await chart(id).evaluate(
      (element, key) => (element as unknown as { dataset: Record<string, string> }).dataset[key],
      field,
    )) ?? 0,
  );
const statusOf = (id: string) => page.locator(`#orders-body tr[data-order-id="${id}"] [data-field="status"]`);
const alertOf = (name: string) => page.locator(`#alerts-list [data-alert="${name}"]`);

describe('the console with Prometheus and Zipkin', () => {
  it('draws live charts from Prometheus once orders flow', async () => {
    // A steady trickle rather than a burst: rate() needs two scrapes of a counter that moved, and
    // a counter is born at its first value (prom-client), so a burst inside one scrape is invisible.
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      ids.push(await placeOrder(`charts-${i}`));
      await sleep(1000);
    }
    for (const id of ids) await statusOf(id).filter({ hasText: 'CONFIRMED' }).waitFor({ timeout: 60_000 });
    // Every chart of infra/grafana/src/charts.ts is on the page, drawn by uPlot (a canvas each).
    const waitFor = (id: string, field: 'points' | 'max') =>
      expect
        .poll(() => chartNumber(id, field), { timeout: 45_000, message: `${id} ${field}` })
        .toBeGreaterThan(0)
        .catch(async (err: unknown) => {
          const { charts } = (await (await fetch(`${consoleApp.url}/api/charts`)).json()) as {
            charts: { id: string }[];
          };
          throw new Error(`${(err as Error).message}: ${JSON.stringify(charts.find((c) => c.id === id))}`);
        });
    for (const id of ['orders-accepted', 'published', 'applied', 'backlog', 'oldest-age', 'latency']) {
      await waitFor(id, 'points');
      expect(await chart(id).locator('canvas').count(), id).toBeGreaterThan(0);
    }
    await waitFor('orders-accepted', 'max');
    await waitFor('published', 'max');
    await waitFor('applied', 'max');
    await page.locator('#alerts-status').filter({ hasText: 'No alert is pending or firing' }).waitFor();
    await screenshot(page, 'console-live-charts');
    await page
      .locator('#live-charts')
      .screenshot({ path: join(screenshotDir, 'console-live-charts-panel.png') });
  });

  it('reads Prometheus where the console reaches it, and links the page to where the browser does', async () => {
    expect(await page.getByRole('link', { name: 'Alerts (Prometheus)' }).getAttribute('href')).toBe(
      `${PROMETHEUS_LINK}/alerts`,
    );
    const alerts = (await (await fetch(`${consoleApp.url}/api/alerts`)).json()) as {
      rules: string[];
      error?: string;
    };
    expect(alerts.error).toBeUndefined();
    expect(alerts.rules.length).toBeGreaterThan(0);
  });

  it("opens an order's trace in Zipkin, with spans from every service", async () => {
    const id = await placeOrder('traced');
    await statusOf(id).filter({ hasText: 'CONFIRMED' }).waitFor({ timeout: 60_000 });
    const link = page.locator(`#orders-body tr[data-order-id="${id}"] a`, { hasText: 'trace' });
    const href = await link.getAttribute('href');
    expect(href).toMatch(new RegExp(`^${zipkin.url}/zipkin/traces/[0-9a-f]{32}$`));
    // The last spans (the consumers of ORDER_CONFIRMED) reach Zipkin within half a second.
    const traceId = href?.split('/').at(-1) ?? '';
    await expect
      .poll(
        async () => {
          const spans = (await (await fetch(`${zipkin.url}/api/v2/trace/${traceId}`)).json()) as {
            localEndpoint?: { serviceName?: string };
          }[];
          return new Set(spans.map((span) => span.localEndpoint?.serviceName)).size;
        },
        { timeout: 30_000 },
      )
      .toBe(PROCESSES.length);

    const [trace] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    try {
      // Zipkin's own UI draws the trace: a row "<service>: <span name>" for each service.
      for (const service of PROCESSES) {
        await trace
          .getByText(new RegExp(`^${service}: `))
          .first()
          .waitFor({ timeout: 30_000 });
      }
      await screenshot(trace, 'console-order-trace-in-zipkin');
    } finally {
      await trace.close();
      // A background tab gets no animation frames, and Playwright's clicks wait for them.
      await page.bringToFront();
    }
  });

  it('logs no error in the browser console while it draws charts and links traces', () => {
    expect(pageErrors).toEqual([]);
  });

  it('raises the backlog and the age alert while the broker is dead, and clears them when it is back', async () => {
    await page.click('#demo tr[data-target="broker"] button[data-action="kill"]');
    await page
      .locator('#demo tr[data-target="broker"] [data-field="state"]')
      .filter({ hasText: 'stopped' })
      .waitFor({ timeout: 30_000 });
    const ids = [await placeOrder('dead-1'), await placeOrder('dead-2'), await placeOrder('dead-3')];

    // The backlog chart rises: three events wait in the orders outbox.
    await expect
      .poll(() => chartNumber('backlog', 'latestMax'), { timeout: 30_000 })
      .toBeGreaterThanOrEqual(3);
    // The real rule (age above 30 s for 30 s) goes pending, then fires, with its runbook.
    const alert = alertOf('OutboxOldestPendingEventTooOld');
    await alert.waitFor({ timeout: 60_000 });
    await page
      .locator('#alerts-list [data-alert="OutboxOldestPendingEventTooOld"][data-state="firing"]')
      .waitFor({ timeout: 90_000 });
    expect(await alert.textContent()).toContain('relay-orders');
    const runbook = await alert.locator('a.runbook').getAttribute('href');
    const section = await (await fetch(`${consoleApp.url}${runbook}`)).text();
    expect(section).toMatch(/^## OutboxOldestPendingEventTooOld\n/);
    expect(await chartNumber('oldest-age', 'latestMax')).toBeGreaterThan(30);
    await screenshot(page, 'console-alert-firing');
    await page.locator('#alerts').screenshot({ path: join(screenshotDir, 'console-alert-firing-panel.png') });

    await page.click('#demo tr[data-target="broker"] button[data-action="start"]');
    for (const id of ids) await statusOf(id).filter({ hasText: 'CONFIRMED' }).waitFor({ timeout: 120_000 });
    await expect.poll(() => chartNumber('backlog', 'latestMax'), { timeout: 30_000 }).toBe(0);
    await alert.waitFor({ state: 'detached', timeout: 60_000 });
    await screenshot(page, 'console-alert-cleared');
  }, 360_000);

  it('says what is missing, and the command that installs it, without Prometheus or a trace backend', async () => {
    const bare = await startConsoleFor(stack, testBroker.broker.brokers);
    const other = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await other.goto(bare.url);
      const prometheusMissing = other.locator('#live-charts [data-missing="prometheus"]');
      await prometheusMissing.waitFor();
      expect(await prometheusMissing.textContent()).toContain('apt-get install -y prometheus');
      expect(await other.locator('#alerts [data-missing="prometheus"]').isVisible()).toBe(true);
      const tracesMissing = other.locator('[data-missing="traces"]');
      expect(await tracesMissing.textContent()).toContain('apt-get install -y openjdk-17-jre-headless maven');
      expect(await other.locator('#charts canvas').count()).toBe(0);
      await screenshot(other, 'console-without-prometheus-and-zipkin');
    } finally {
      await other.close();
      await bare.close();
    }
  });
});
