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
  return (await readTraceBody(traceId)).spans;
}

/** The trace as Zipkin's API returns it, and the size of that JSON: what one order costs Zipkin. */
async function readTraceBody(traceId: string): Promise<{ spans: ZipkinSpan[]; bytes: number }> {
  const res = await fetch(`${zipkin.url}/api/v2/trace/${traceId}`);
  if (!res.ok) return { spans: [], bytes: 0 };
  const body = await res.text();
  return { spans: JSON.parse(body) as ZipkinSpan[], bytes: Buffer.byteLength(body) };
}

async function placeOrder(customerId: string): Promise<string> {
  const res = await fetch(`${stack.services.orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId, currency: 'EUR', items: [{ sku: 'KB-101', quantity: 1 }] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** The trace id the console links to: the one stored with the order's ORDER_CREATED row. */
async function traceIdOf(orderId: string): Promise<{ traceId: string | undefined; traceparent: string }> {
  const [created] = await queryOnce<{ traceparent: string }>(
    stack.databases.orders.url,
    `select headers->>'traceparent' as traceparent from outbox where aggregate_id = $1 and event_type = 'ORDER_CREATED'`,
    [orderId],
  );
  return { traceId: created?.traceparent.split('-')[1], traceparent: created?.traceparent ?? '' };
}

describe('traces in Zipkin', () => {
  it('holds one trace per order with spans from every service, each hop under the one before', async () => {
    const orderId = await placeOrder('zoe');
    const { traceId, traceparent } = await traceIdOf(orderId);
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
    expect(found.createdPublish.parentId).toBe(traceparent.split('-')[2]);
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

/**
 * What one order's trace costs Zipkin: its spans and the bytes of its JSON, the figures of
 * docs/tracing.md ("What one order costs"). Zipkin's in-memory store is sized by them
 * (tools/devstack/src/zipkinServer.ts), so a span more per order is a change to review there too.
 */
describe('the weight of one order in Zipkin', () => {
  const ORDERS = 5;

  it('is the request and one span per event hop, each carrying only the service resource', async () => {
    const orderIds = [];
    for (let i = 0; i < ORDERS; i++) orderIds.push(await placeOrder(`weigh-${i}`));
    type Weight = { spans: number; bytes: number; names: string[]; tags: Set<string>; largest: string };
    const weights: Weight[] = [];
    for (const orderId of orderIds) {
      const { traceId } = await traceIdOf(orderId);
      if (!traceId) throw new Error(`order ${orderId} stored no trace context`);
      // Complete once both consumers handled ORDER_CONFIRMED, the last hop; stable once a read a
      // second later finds no span more (late spans, e.g. the relay marking the row, would show).
      let previous = -1;
      const trace = await eventually(
        `the trace of order ${orderId} complete and stable in Zipkin`,
        async () => {
          const read = await readTraceBody(traceId);
          const confirmedBy = read.spans.filter(
            (s) => s.kind === 'CONSUMER' && s.tags?.['cloudevents.event_type'] === 'ORDER_CONFIRMED',
          );
          const stable = confirmedBy.length >= 2 && read.spans.length === previous;
          previous = read.spans.length;
          if (!stable) await new Promise((resolve) => setTimeout(resolve, 1000));
          return stable ? read : undefined;
        },
        60_000,
      );
      weights.push({
        spans: trace.spans.length,
        bytes: trace.bytes,
        names: trace.spans.map((s) => `${s.localEndpoint?.serviceName}: ${s.name}`).sort(),
        tags: new Set(trace.spans.flatMap((s) => Object.keys(s.tags ?? {}))),
        largest: trace.spans.map((s) => JSON.stringify(s)).sort((a, b) => b.length - a.length)[0] ?? '',
      });
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const spans = mean(weights.map((w) => w.spans));
    const bytes = mean(weights.map((w) => w.bytes));
    console.log(
      `one order in Zipkin (mean of ${ORDERS}): ${spans.toFixed(1)} spans, ${(bytes / 1000).toFixed(1)} KB ` +
        `of JSON, ${Math.round(bytes / spans)} B/span\nspans of the first: ${weights[0]?.names.join(', ')}\n` +
        `tags: ${[...(weights[0]?.tags ?? [])].sort().join(', ')}\n` +
        `largest span (${weights[0]?.largest.length} B): ${weights[0]?.largest}`,
    );

    // The request span, 4 publish spans (ORDER_CREATED, STOCK_RESERVED, PAYMENT_AUTHORIZED,
    // ORDER_CONFIRMED) and 6 process spans (ORDER_CREATED and ORDER_CONFIRMED by inventory and
    // billing, the two replies by orders): no pg, pg-pool or Express middleware spans.
    for (const w of weights) {
      expect(w.names.filter((name) => /pg[.-]|middleware|request handler|router/.test(name))).toEqual([]);
      // 11, or a little more when Kafka redelivered a message or the relay retried a publish
      // (each makes a span of its own, docs/tracing.md).
      expect(w.spans).toBeGreaterThanOrEqual(11);
      expect(w.spans).toBeLessThanOrEqual(13);
      // The resource is the service's name, version and instance; no host, process or OS details.
      expect([...w.tags].filter((tag) => /^(host|process|os|telemetry)\./.test(tag))).toEqual([]);
    }
    expect(bytes).toBeLessThan(12_000); // 10.0 KB measured (docs/tracing.md)
  });
});
