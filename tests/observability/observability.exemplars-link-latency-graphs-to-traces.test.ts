// Links from the dashboards to traces: the latency histograms carry, per bucket, the trace id of an
// observation as an OpenMetrics exemplar (packages/runtime/src/exemplars.ts). With tracing on, a
// real Prometheus (exemplar storage on, as in docker-compose.yml) scrapes the stack; every dashboard
// query that asks for exemplars gets some, and each exemplar's trace_id is a trace the services
// really exported — the trace of an order placed here — so Grafana's link lands on a real trace.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import {
  type OtlpReceiver,
  startOtlpReceiver,
  tracingEnvForStack,
} from '@outbox/devstack/testing/otlp-receiver';
import { startPrometheus, type TestPrometheus } from '@outbox/devstack/testing/prometheus';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { TRACE_ID_LABEL } from '@outbox/runtime/exemplars';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const JOBS = ['orders', 'inventory', 'billing', 'relay-orders', 'relay-inventory', 'relay-billing'] as const;

type Target = { expr?: string; exemplar?: boolean };
type Panel = { title: string; targets?: Target[] };
/** Every dashboard target that asks Grafana to fetch exemplars. */
const exemplarQueries = ['outbox.json', 'consumers.json', 'orders-api.json', 'order-flow.json'].flatMap(
  (file) => {
    const { panels } = JSON.parse(
      readFileSync(path.join(root, 'infra/grafana/dashboards', file), 'utf8'),
    ) as {
      panels: Panel[];
    };
    return panels.flatMap((panel) =>
      (panel.targets ?? [])
        .filter((target) => target.exemplar && target.expr)
        .map((target) => ({
          name: `${file} "${panel.title}"`,
          // As Grafana sends it: interval macros resolved, dashboard variables at "All".
          expr: (target.expr ?? '').replace(/\$__rate_interval/g, '1m').replace(/\$\w+/g, '.*'),
        })),
    );
  },
);

let receiver: OtlpReceiver;
let stack: Stack;
let prometheus: TestPrometheus;
let orderTraceIds: Set<string>;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  stack = await startStack('exemplars', sharedKafkaBrokers(), tracingEnvForStack(receiver));
  prometheus = await startPrometheus(
    Object.fromEntries(JOBS.map((job) => [job, stack.services[job].port])),
    [],
  );

  const ids = await Promise.all(
    ['ex-a', 'ex-b', 'ex-c'].map(async (customerId) => {
      const res = await fetch(`${stack.services.orders.url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customerId, currency: 'EUR', items: [{ sku: 'KB-101', quantity: 1 }] }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    }),
  );
  await eventually(
    'orders confirmed',
    async () => {
      const [row] = await queryOnce<{ confirmed: number }>(
        stack.databases.orders.url,
        `select count(*)::int as confirmed from orders where id = any($1::uuid[]) and status = 'CONFIRMED'`,
        [ids],
      );
      return row?.confirmed === ids.length || undefined;
    },
    45_000,
  );
  // The trace of each order: stored with its ORDER_CREATED by the request's transaction.
  const rows = await queryOnce<{ traceparent: string }>(
    stack.databases.orders.url,
    `select headers->>'traceparent' as traceparent from outbox
      where event_type = 'ORDER_CREATED' and aggregate_id = any($1::text[])`,
    [ids],
  );
  orderTraceIds = new Set(rows.map((row) => row.traceparent.split('-')[1] ?? ''));
  expect(orderTraceIds.size).toBe(ids.length);
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await stack?.stop();
  await receiver?.close();
});

describe('exemplars', () => {
  it('are asked for by the latency panels of the dashboards', () => {
    expect(exemplarQueries.length).toBeGreaterThanOrEqual(5);
  });

  it.each(exemplarQueries)(
    '$name returns exemplars whose trace_id is a trace the services exported',
    async ({ expr }) => {
      const exemplars = await eventually(
        `exemplars for ${expr}`,
        async () => {
          const res = await prometheus.queryExemplars(expr);
          expect(res.status, res.error).toBe('success');
          const found = (res.data ?? []).flatMap((series) => series.exemplars);
          return found.length > 0 ? found : undefined;
        },
        30_000,
      );
      const exported = new Set(receiver.spans.map((span) => span.traceId));
      for (const exemplar of exemplars) {
        const traceId = exemplar.labels[TRACE_ID_LABEL];
        expect(traceId).toMatch(/^[\da-f]{32}$/);
        expect(exported.has(traceId ?? '')).toBe(true);
      }
    },
  );

  it("links the relay's commit-to-publish latency to the trace of the order that wrote the event", async () => {
    const relayOrders = async () => {
      const res = await prometheus.queryExemplars(
        'outbox_commit_to_publish_seconds_bucket{job="relay-orders"}',
      );
      const traceIds = (res.data ?? []).flatMap((series) =>
        series.exemplars.map((e) => e.labels[TRACE_ID_LABEL]),
      );
      return traceIds.length > 0 ? traceIds : undefined;
    };
    const traceIds = await eventually('exemplars of relay-orders in Prometheus', relayOrders, 30_000).catch(
      async (err: Error) => {
        // Say what the relay exposed, to tell a scrape problem from a missing exemplar.
        const exposed = (await (await fetch(`${stack.services['relay-orders'].url}/metrics`)).text())
          .split('\n')
          .filter((line) => line.startsWith('outbox_commit_to_publish_seconds_bucket'));
        throw new Error(`${err.message}; relay-orders exposes:\n${exposed.join('\n')}`);
      },
    );
    for (const traceId of traceIds) expect(orderTraceIds.has(traceId ?? '')).toBe(true);
  });
});
