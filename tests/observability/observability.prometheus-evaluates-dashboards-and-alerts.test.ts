// The Grafana dashboards (infra/grafana/dashboards) and the alert rules (infra/prometheus/alerts.yml)
// against a real Prometheus scraping the real stack: every panel query and every alert expression is
// valid PromQL that Prometheus evaluates without error, the key panels return data after a few
// orders, and Prometheus loads the rule file with every rule healthy.
// Requires /usr/bin/prometheus (Debian package `prometheus`, as for promtool in tests/alerts).

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { startPrometheus, type TestPrometheus } from '@outbox/devstack/testing/prometheus';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

useLeakGuard();

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dashboardsDir = path.join(root, 'infra/grafana/dashboards');
const rulesFile = path.join(root, 'infra/prometheus/alerts.yml');
const JOBS = ['orders', 'inventory', 'billing', 'relay-orders', 'relay-inventory', 'relay-billing'] as const;

type Target = { refId: string; expr?: string };
type Panel = { id: number; title: string; type: string; targets?: Target[]; panels?: Panel[] };
type Dashboard = { uid: string; title: string; panels: Panel[]; templating?: { list: { name: string }[] } };
type Rule = { alert?: string; record?: string; expr: string };

const dashboards = readdirSync(dashboardsDir)
  .filter((file) => file.endsWith('.json'))
  .map((file) => ({
    file,
    ...(JSON.parse(readFileSync(path.join(dashboardsDir, file), 'utf8')) as Dashboard),
  }));

/** Every panel target with a query, rows' nested panels included. */
const queries = dashboards.flatMap((dashboard) =>
  dashboard.panels
    .flatMap((panel) => [panel, ...(panel.panels ?? [])])
    .flatMap((panel) =>
      (panel.targets ?? [])
        .filter((target): target is Target & { expr: string } => typeof target.expr === 'string')
        .map((target) => ({
          name: `${dashboard.file} #${panel.id} "${panel.title}" ${target.refId}`,
          file: dashboard.file,
          title: panel.title,
          expr: target.expr,
        })),
    ),
);

const rules = (parseYaml(readFileSync(rulesFile, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (group) => group.rules,
);

/** What Grafana would send: its interval macros resolved, every dashboard variable at "All" (`.*`). */
function resolve(expr: string): string {
  return expr
    .replace(/\$\{?__rate_interval\}?/g, '1m')
    .replace(/\$\{?__interval\}?/g, '15s')
    .replace(/\$\{\w+(?::\w+)?\}|\$\w+/g, '.*');
}

type QueryResponse = {
  status: 'success' | 'error';
  errorType?: string;
  error?: string;
  warnings?: string[];
  data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
};

let stack: Stack;
let prometheus: TestPrometheus;
const query = (expr: string) => prometheus.query(expr) as Promise<QueryResponse>;

async function placeOrder(customerId: string): Promise<string> {
  const res = await fetch(`${stack.services.orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId, currency: 'EUR', items: [{ sku: 'KB-101', quantity: 1 }] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const orderStatus = async (id: string) =>
  ((await (await fetch(`${stack.services.orders.url}/orders/${id}`)).json()) as { status: string }).status;

beforeAll(async () => {
  stack = await startStack('obs', sharedKafkaBrokers());
  prometheus = await startPrometheus(Object.fromEntries(JOBS.map((job) => [job, stack.services[job].port])), [
    rulesFile,
  ]);

  // Traffic: confirmed orders, one declined by billing (cancelled), a 400 and a 404 for the 4xx ratio.
  const confirmed = await Promise.all([placeOrder('obs-a'), placeOrder('obs-b'), placeOrder('obs-c')]);
  const cancelled = await placeOrder('declined-obs');
  const invalid = await fetch(`${stack.services.orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId: '', items: [] }),
  });
  expect(invalid.status).toBeGreaterThanOrEqual(400);
  expect(invalid.status).toBeLessThan(500);
  expect(
    (await fetch(`${stack.services.orders.url}/orders/00000000-0000-4000-8000-000000000000`)).status,
  ).toBe(404);
  await eventually(
    'orders settled',
    async () => {
      const statuses = await Promise.all([...confirmed, cancelled].map(orderStatus));
      return statuses.slice(0, 3).every((s) => s === 'CONFIRMED') && statuses[3] === 'CANCELLED'
        ? statuses
        : undefined;
    },
    45_000,
  );
});

afterAll(async () => {
  await prometheus?.stop();
  await stack?.stop();
});

/** Key panels that must show data once a few orders went through: dashboard file, panel title. */
const keyPanels: [string, string][] = [
  ['outbox.json', 'Outbox backlog by status'],
  ['outbox.json', 'Events published per relay'],
  ['outbox.json', 'Events published by event type'],
  ['outbox.json', 'Commit-to-publish latency'],
  ['consumers.json', 'Events handled by result'],
  ['consumers.json', 'Events applied by event type'],
  ['consumers.json', 'Commit-to-consume latency'],
  ['orders-api.json', 'Requests per second'],
  ['orders-api.json', 'Request rate by route and status'],
  ['orders-api.json', '4xx ratio by route'],
  // The live charts the web console draws from the same queries (infra/grafana/src/charts.ts).
  ['order-flow.json', 'Orders accepted per second'],
  ['order-flow.json', 'Events published per second, per outbox'],
  ['order-flow.json', 'Events applied per second, per consumer'],
  ['order-flow.json', 'Outbox backlog'],
  ['order-flow.json', 'Oldest unpublished event'],
  ['order-flow.json', 'End-to-end latency, commit to consumed'],
  ['order-flow.json', 'Consumer lag'],
];

describe('Prometheus scraping the stack', () => {
  it('scrapes all six processes', async () => {
    const up = await eventually('six targets up', async () => {
      const res = await query('up == 1');
      return res.data?.result.length === JOBS.length ? res : undefined;
    });
    expect(up.data?.result.map((r) => r.metric.job).sort()).toEqual([...JOBS].sort());
  });

  it('has a query for every panel, and knows every key panel', () => {
    expect(queries.length).toBeGreaterThan(20);
    for (const [file, title] of keyPanels) {
      expect(
        queries.some((q) => q.file === file && q.title === title),
        `${file} "${title}"`,
      ).toBe(true);
    }
  });

  it('returns data for the key panels after the orders', async () => {
    const key = queries.filter((q) =>
      keyPanels.some(([file, title]) => q.file === file && q.title === title),
    );
    // rate() needs two samples of a counter after its first increment: wait for the scrapes.
    await eventually(
      'every key panel query returns series',
      async () => {
        const results = await Promise.all(key.map((q) => query(resolve(q.expr))));
        return results.every((r) => r.status === 'success' && (r.data?.result.length ?? 0) > 0) || undefined;
      },
      30_000,
    ).catch(async (err: unknown) => {
      const empty: string[] = [];
      for (const q of key)
        if (((await query(resolve(q.expr))).data?.result.length ?? 0) === 0) empty.push(q.name);
      throw new Error(`${(err as Error).message}; empty: ${empty.join(', ')}`);
    });
  });

  it('evaluates every panel query of every dashboard without error', async () => {
    const failures: string[] = [];
    for (const q of queries) {
      const res = await query(resolve(q.expr));
      if (res.status !== 'success') failures.push(`${q.name}: ${res.errorType} ${res.error}`);
      else if (res.warnings?.length) failures.push(`${q.name}: warnings ${res.warnings.join('; ')}`);
    }
    expect(failures).toEqual([]);
  });

  it('evaluates every alert expression without error', async () => {
    expect(rules.length).toBeGreaterThan(0);
    const failures: string[] = [];
    for (const rule of rules) {
      const res = await query(rule.expr);
      if (res.status !== 'success')
        failures.push(`${rule.alert ?? rule.record}: ${res.errorType} ${res.error}`);
    }
    expect(failures).toEqual([]);
  });

  it('loads every alert rule, each healthy', async () => {
    type RulesResponse = {
      status: string;
      data: { groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[] };
    };
    const loaded = await eventually('rules evaluated at least once', async () => {
      const res = (await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as RulesResponse;
      const all = res.data.groups.flatMap((group) => group.rules);
      return all.length > 0 && all.every((rule) => rule.health !== 'unknown') ? all : undefined;
    });
    expect(loaded.map((rule) => rule.name).sort()).toEqual(
      rules.map((rule) => rule.alert ?? rule.record).sort(),
    );
    expect(loaded.filter((rule) => rule.health !== 'ok')).toEqual([]);
  });
});
