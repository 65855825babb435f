// With the broker killed and orders still arriving, a real Prometheus scraping the real stack sees
// the outbox backlog and the age of its oldest event rise until the alert expressions for them
// are true; once the broker is back, the backlog drains and the expressions are false again.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KafkaBroker } from '@outbox/devstack/kafka-broker';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { startPrometheus, type TestPrometheus } from '@outbox/devstack/testing/prometheus';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { startTestBroker, type TestBroker } from '@outbox/devstack/testing/test-broker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

useLeakGuard();

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const rulesFile = path.join(root, 'infra/prometheus/alerts.yml');
const rules = (
  parseYaml(readFileSync(rulesFile, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }
).groups.flatMap((group) => group.rules);
const exprOf = (alert: string) => {
  const rule = rules.find((r) => r.alert === alert);
  if (!rule) throw new Error(`no alert ${alert} in alerts.yml`);
  return rule.expr;
};
const JOBS = ['orders', 'inventory', 'billing', 'relay-orders', 'relay-inventory', 'relay-billing'] as const;

// This file kills its broker, so it runs its own.
let testBroker: TestBroker;
let broker: KafkaBroker;
let stack: Stack;
let prometheus: TestPrometheus;

beforeAll(async () => {
  testBroker = await startTestBroker('obs-broker-kill');
  broker = testBroker.broker;
  stack = await startStack('obskill', broker.brokers);
  prometheus = await startPrometheus(Object.fromEntries(JOBS.map((job) => [job, stack.services[job].port])), [
    rulesFile,
  ]);
});

afterAll(async () => {
  await prometheus?.stop();
  await stack?.stop();
  await testBroker?.dispose();
});

async function placeOrder(customerId: string): Promise<void> {
  const res = await fetch(`${stack.services.orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId, currency: 'EUR', items: [{ sku: 'CB-505', quantity: 1 }] }),
  });
  expect(res.status).toBe(201);
}

/** The series an alert's expression returns right now, for the relay of the orders outbox. */
async function firing(alert: string): Promise<boolean> {
  const response = await prometheus.query(exprOf(alert));
  expect(response.status).toBe('success');
  return (response.data?.result ?? []).some(
    (series) => (series as { metric: { job?: string } }).metric.job === 'relay-orders',
  );
}

async function backlog(): Promise<number> {
  const response = await prometheus.query(
    'sum(outbox_events{job="relay-orders", status=~"pending|in_flight"})',
  );
  const [series] = (response.data?.result ?? []) as { value: [number, string] }[];
  return Number(series?.value[1] ?? Number.NaN);
}

describe('alerts with the broker down', () => {
  it('backlog and oldest-age rise until their alert expressions are true, and fall back after a restart', {
    timeout: 240_000,
  }, async () => {
    await placeOrder('before');
    await eventually(
      'a healthy baseline: nothing waiting',
      async () => ((await backlog()) === 0 ? true : undefined),
      60_000,
    );
    expect(await firing('OutboxOldestPendingEventTooOld')).toBe(false);

    await broker.kill();
    // Orders keep arriving while Kafka is gone: the outbox holds them.
    const arriving = setInterval(() => void placeOrder('during').catch(() => {}), 2_000);
    try {
      await eventually('the backlog rises', async () => ((await backlog()) >= 3 ? true : undefined), 60_000);
      await eventually(
        'the oldest pending event is older than 30 s (OutboxOldestPendingEventTooOld true)',
        async () => ((await firing('OutboxOldestPendingEventTooOld')) ? true : undefined),
        90_000,
      );
    } finally {
      clearInterval(arriving);
    }

    await broker.start();
    await broker.waitUntilReady(120_000);
    await eventually('the backlog drains', async () => ((await backlog()) === 0 ? true : undefined), 120_000);
    await eventually(
      'OutboxOldestPendingEventTooOld false again',
      async () => ((await firing('OutboxOldestPendingEventTooOld')) ? undefined : true),
      30_000,
    );
  });
});
