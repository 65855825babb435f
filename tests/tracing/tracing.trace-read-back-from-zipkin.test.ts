// The demo's trace backend, for real: the six processes export their spans with OpenTelemetry's
// Zipkin exporter (the environment `./dev demo` gives them) to a real Zipkin server run from its
// Maven Central jar, and the test reads the order's trace back through Zipkin's own API. Every
// process is in it, and each hop hangs under the one before it (docs/tracing.md, "The spans").

import { freePort } from '@outbox/devstack/ports';
import { RELAYS, SERVICES } from '@outbox/devstack/stack-plan';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { ZipkinServer } from '@outbox/devstack/zipkin-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

/** A span as Zipkin's API v2 returns it (GET /api/v2/trace/{traceId}). */
type ZipkinSpan = {
  traceId: string;
  id: string;
  parentId?: string;
  name?: string;
  kind?: 'CLIENT' | 'SERVER' | 'PRODUCER' | 'CONSUMER';
  localEndpoint?: { serviceName?: string };
  tags?: Record<string, string>;
};

let zipkin: ZipkinServer;
let stack: Stack;

beforeAll(async () => {
  zipkin = new ZipkinServer({ name: `test-${process.pid}`, port: await freePort() });
  await zipkin.start();
  await zipkin.waitUntilReady(90_000);
  stack = await startStack(
    'zipkin',
    sharedKafkaBrokers(),
    Object.fromEntries([...SERVICES, ...RELAYS].map((name) => [name, zipkin.tracingEnv(name)])),
  );
});

afterAll(async () => {
  await stack?.stop();
  await zipkin?.stop();
});

async function readTrace(traceId: string): Promise<ZipkinSpan[]> {
  const res = await fetch(`${zipkin.url}/api/v2/trace/${traceId}`);
  return res.ok ? ((await res.json()) as ZipkinSpan[]) : [];
}

describe('traces in Zipkin', () => {
  it('holds one trace per order with spans from every service, each hop under the one before', async () => {
    const res = await fetch(`${stack.services.orders.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'zoe', currency: 'EUR', items: [{ sku: 'KB-101', quantity: 1 }] }),
    });
    expect(res.status).toBe(201);
    const orderId = ((await res.json()) as { id: string }).id;

    // The trace id the console links to: the one stored with the order's ORDER_CREATED row.
    const [created] = await queryOnce<{ traceparent: string }>(
      stack.databases.orders.url,
      `select headers->>'traceparent' as traceparent from outbox where aggregate_id = $1 and event_type = 'ORDER_CREATED'`,
      [orderId],
    );
    const traceId = created?.traceparent.split('-')[1];
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    if (!traceId) return;

    const kafkaSpan = (spans: ZipkinSpan[], service: string, kind: string, type: string) =>
      spans.find(
        (s) =>
          s.localEndpoint?.serviceName === service &&
          s.kind === kind &&
          s.tags?.['cloudevents.event_type'] === type &&
          s.tags['messaging.kafka.message.key'] === orderId,
      );
    const hops = (spans: ZipkinSpan[]) => ({
      server: spans.find((s) => s.localEndpoint?.serviceName === 'orders' && s.kind === 'SERVER'),
      createdPublish: kafkaSpan(spans, 'relay-orders', 'PRODUCER', 'ORDER_CREATED'),
      inventoryProcess: kafkaSpan(spans, 'inventory', 'CONSUMER', 'ORDER_CREATED'),
      billingProcess: kafkaSpan(spans, 'billing', 'CONSUMER', 'ORDER_CREATED'),
      reservedPublish: kafkaSpan(spans, 'relay-inventory', 'PRODUCER', 'STOCK_RESERVED'),
      authorizedPublish: kafkaSpan(spans, 'relay-billing', 'PRODUCER', 'PAYMENT_AUTHORIZED'),
      reservedProcess: kafkaSpan(spans, 'orders', 'CONSUMER', 'STOCK_RESERVED'),
      authorizedProcess: kafkaSpan(spans, 'orders', 'CONSUMER', 'PAYMENT_AUTHORIZED'),
      confirmedPublish: kafkaSpan(spans, 'relay-orders', 'PRODUCER', 'ORDER_CONFIRMED'),
      confirmedInventory: kafkaSpan(spans, 'inventory', 'CONSUMER', 'ORDER_CONFIRMED'),
      confirmedBilling: kafkaSpan(spans, 'billing', 'CONSUMER', 'ORDER_CONFIRMED'),
    });
    type Hops = { [K in keyof ReturnType<typeof hops>]: ZipkinSpan };
    let last: ZipkinSpan[] = [];
    const { spans, found } = await eventually(
      `the trace ${traceId} complete in Zipkin`,
      async () => {
        last = await readTrace(traceId);
        const found = hops(last);
        return Object.values(found).every(Boolean) ? { spans: last, found: found as Hops } : undefined;
      },
      60_000,
    ).catch((err: unknown) => {
      const missing = Object.entries(hops(last))
        .filter(([, span]) => !span)
        .map(([hop]) => hop);
      throw new Error(`${(err as Error).message}; missing: ${missing.join(', ')}`);
    });

    // Spans from every process of the system, all in this one trace.
    const services = new Set(spans.map((s) => s.localEndpoint?.serviceName));
    expect([...services].sort()).toEqual([...SERVICES, ...RELAYS].sort());
    for (const span of spans) expect(span.traceId).toBe(traceId);

    const byId = new Map(spans.map((s) => [s.id, s]));
    const ancestors = (span: ZipkinSpan): ZipkinSpan[] => {
      const chain: ZipkinSpan[] = [];
      for (let parent = byId.get(span.parentId ?? ''); parent; parent = byId.get(parent.parentId ?? '')) {
        chain.push(parent);
      }
      return chain;
    };

    // The request is the root; the relay's publish continues the transaction that wrote the row.
    expect(found.server.parentId).toBeUndefined();
    expect(found.createdPublish.parentId).toBe(created?.traceparent.split('-')[2]);
    expect(ancestors(found.createdPublish)).toContainEqual(found.server);
    // Each consumer's handling is a child of the publish of the message it handled.
    expect(found.inventoryProcess.parentId).toBe(found.createdPublish.id);
    expect(found.billingProcess.parentId).toBe(found.createdPublish.id);
    // The replies are published under the handling that wrote them, and handled under their publish.
    expect(ancestors(found.reservedPublish)).toContainEqual(found.inventoryProcess);
    expect(ancestors(found.authorizedPublish)).toContainEqual(found.billingProcess);
    expect(found.reservedProcess.parentId).toBe(found.reservedPublish.id);
    expect(found.authorizedProcess.parentId).toBe(found.authorizedPublish.id);
    // The confirmation hangs under whichever reply came second.
    const confirmedBy = ancestors(found.confirmedPublish);
    expect(confirmedBy.includes(found.reservedProcess) || confirmedBy.includes(found.authorizedProcess)).toBe(
      true,
    );
    expect(found.confirmedInventory.parentId).toBe(found.confirmedPublish.id);
    expect(found.confirmedBilling.parentId).toBe(found.confirmedPublish.id);
  });
});
