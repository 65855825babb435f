// A public caller's traceparent is a claim, not a decision (docs/tracing.md, "A caller's
// traceparent"): with every process limited to one new trace a second, a burst of orders each sent
// with a `-01` traceparent is sampled like any other burst, a few traced and the rest not, and
// every order's trace is orders' own, with the caller's context kept as a link of the request's
// span. TRACING_TRUST_INCOMING_TRACEPARENT is off (the default); the one-order-one-trace test runs
// orders with it on, and the caller's trace id carried through.
import { randomBytes } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import {
  type OtlpReceiver,
  startOtlpReceiver,
  tracingEnvForStack,
} from '@outbox/devstack/testing/otlp-receiver';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

const ORDERS = 12;

let receiver: OtlpReceiver;
let stack: Stack;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const tracing = tracingEnvForStack(receiver);
  const limited = Object.fromEntries(
    Object.entries(tracing).map(([name, env]) => [name, { ...env, TRACING_MAX_TRACES_PER_SECOND: '1' }]),
  );
  stack = await startStack('untrusted_caller', sharedKafkaBrokers(), limited);
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

type Caller = { traceId: string; spanId: string };

async function placeOrder(n: number, caller: Caller): Promise<string> {
  const res = await fetch(`${stack.services.orders.url}/orders`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      traceparent: `00-${caller.traceId}-${caller.spanId}-01`,
    },
    body: JSON.stringify({
      customerId: `forcing-${n}`,
      currency: 'EUR',
      items: [{ sku: 'KB-101', quantity: 1 }],
    }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

describe("a caller's traceparent", () => {
  it('neither forces sampling past the rate limit nor picks the trace id; it is linked', async () => {
    const orders: { orderId: string; caller: Caller }[] = [];
    // One after the other: all at once, the orders API sheds some (503 overloaded, its admission).
    for (let n = 0; n < ORDERS; n++) {
      const caller = { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') };
      orders.push({ orderId: await placeOrder(n, caller), caller });
    }

    // The decision for each order, as every process after orders sees it: ORDER_CREATED's traceparent.
    const stored = await queryOnce<{ aggregate_id: string; traceparent: string }>(
      stack.databases.orders.url,
      `select aggregate_id, headers->>'traceparent' as traceparent
         from outbox where event_type = 'ORDER_CREATED' and aggregate_id = any($1::text[])`,
      [orders.map((order) => order.orderId)],
    );
    const traced = orders.map((order) => {
      const traceparent = stored.find((row) => row.aggregate_id === order.orderId)?.traceparent ?? '';
      const [, traceId, , flags] = traceparent.split('-');
      return { ...order, traceId: traceId ?? '', sampled: flags === '01' };
    });
    expect(traced.map((order) => order.traceId)).not.toContain('');

    // The trace ids are orders' own, never the caller's.
    for (const order of traced) expect(order.traceId, order.orderId).not.toBe(order.caller.traceId);
    // The rate limit held: one token at start and one a second after, the burst is mostly untraced.
    const sampled = traced.filter((order) => order.sampled);
    expect(sampled.length).toBeGreaterThanOrEqual(1);
    expect(traced.length - sampled.length).toBeGreaterThanOrEqual(ORDERS / 2);

    // A traced order's request span starts its trace, linked to the caller's span.
    const serverSpanOf = (traceId: string) =>
      receiver.spans.find((s) => s.traceId === traceId && s.service === 'orders' && s.kind === 'server');
    await eventually(
      'the request span of every traced order',
      async () => sampled.every((order) => serverSpanOf(order.traceId)) || undefined,
      30_000,
    );
    for (const order of sampled) {
      const server = serverSpanOf(order.traceId);
      expect(server?.parentSpanId, order.orderId).toBeUndefined();
      expect(server?.links, order.orderId).toEqual([order.caller]);
    }
    // Nothing anywhere was recorded in a caller's trace.
    const callerTraces = new Set(orders.map((order) => order.caller.traceId));
    expect(
      receiver.spans.filter((s) => callerTraces.has(s.traceId)).map((s) => `${s.service}: ${s.name}`),
    ).toEqual([]);
  });
});
