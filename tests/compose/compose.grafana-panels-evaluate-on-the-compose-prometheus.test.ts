import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '@outbox/devstack/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeTestsEnabled, devCompose, json, order, skipNote, urls } from './composeStack.ts';

/**
 * Grafana itself cannot be installed on this project's machines, so its dashboards are checked as
 * far as that allows: every panel's query, with Grafana's variables put in as Grafana would put
 * them, evaluated by the compose stack's Prometheus after orders went through it. Each query must
 * parse and evaluate, and each but those of failures must return series: a panel that draws nothing
 * on a working system names a metric or a label no process exports.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dashboardsDir = path.join(root, 'infra/grafana/dashboards');

type Panel = { title?: string; targets?: { expr?: string }[]; panels?: Panel[] };

/** [dashboard / panel, expr] of every query of every provisioned dashboard. */
function panelQueries(): [string, string][] {
  const queries: [string, string][] = [];
  for (const file of readdirSync(dashboardsDir).filter((f) => f.endsWith('.json'))) {
    const dashboard = JSON.parse(readFileSync(path.join(dashboardsDir, file), 'utf8')) as { panels: Panel[] };
    const walk = (panels: Panel[]) => {
      for (const panel of panels) {
        for (const target of panel.targets ?? [])
          if (target.expr) queries.push([`${file} / ${panel.title ?? '(untitled)'}`, target.expr]);
        walk(panel.panels ?? []);
      }
    };
    walk(dashboard.panels);
  }
  return queries;
}

/**
 * As Grafana sends it: `$__rate_interval` is at least four scrape intervals (15 s here), and a
 * multi-value variable set to All (every dashboard's default) matches every value.
 */
const asGrafanaSends = (expr: string) =>
  expr.replaceAll('$__rate_interval', '1m').replace(/\$\{?(job|route)\}?/g, '.+');

/**
 * The queries of what a healthy run has none of: firing alerts, duplicates, dead letters, publish
 * failures. Their counters come into being with their first event, so these panels may be empty.
 */
const FAILURES = /ALERTS|result="duplicate"|dead_lettered|publish_failures|status="failed"/;

describe.skipIf(!composeTestsEnabled)(`the Grafana dashboards on the compose Prometheus${skipNote}`, () => {
  const queries = panelQueries();

  beforeAll(async () => {
    // A fresh stack, whatever ran before.
    devCompose(['down']);
    devCompose(['up']);
    // Confirmed orders, and cancelled ones: 200 keyboards are more than billing authorizes.
    const cancelled = { ...order('grafana-cancelled'), items: [{ sku: 'KB-101', quantity: 200 }] };
    for (const body of [
      ...Array.from({ length: 10 }, (_, i) => order(`grafana-${i}`)),
      cancelled,
      cancelled,
    ]) {
      const placed = await json(`${urls.orders}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(placed.status).toBe(201);
    }
    // Two scrapes of each target since the saga decided those orders, so that every rate over a
    // minute is defined: the relay's counters of the decisions, and the API's count of the orders
    // it accepted (each target is scraped on its own phase of the interval).
    const twoScrapes = [
      ['count_over_time(outbox_published_total{event_type=~"ORDER_CONFIRMED|ORDER_CANCELLED"}[1m]) >= 2', 2],
      [
        'count_over_time(http_requests_total{job="orders", route="/orders", method="POST", status="201"}[1m]) >= 2',
        1,
      ],
    ] as const;
    await eventually(
      'two scrapes of the orders accepted, confirmed and cancelled',
      async () => {
        for (const [query, series] of twoScrapes) {
          const { body } = await json<{ data: { result: unknown[] } }>(
            `${urls.prometheus}/api/v1/query?query=${encodeURIComponent(query)}`,
          );
          if (body.data.result.length !== series) return undefined;
        }
        return true;
      },
      120_000,
    );
  }, 20 * 60_000);

  afterAll(() => {
    devCompose(['down']);
  }, 5 * 60_000);

  it('has queries to check', () => {
    expect(queries.length).toBeGreaterThan(20);
  });

  it.each(queries)('%s evaluates and returns series', async (_panel, expr) => {
    const query = asGrafanaSends(expr);
    const { status, body } = await json<{ status: string; error?: string; data?: { result: unknown[] } }>(
      `${urls.prometheus}/api/v1/query?query=${encodeURIComponent(query)}`,
    );
    expect(body.error ?? '', query).toBe('');
    expect(status).toBe(200);
    if (!FAILURES.test(expr)) expect(body.data?.result.length, query).toBeGreaterThan(0);
  });
});
