// One order, one trace: POST /orders, the relay's publish of ORDER_CREATED, inventory's and
// billing's processing, their replies' publishes, orders' processing of the replies and the
// ORDER_CONFIRMED it writes all share one trace id, with the parent structure docs/tracing.md
// describes. The six processes export their spans over OTLP/HTTP (JSON) to a receiver in this test.
import { randomBytes } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import {
  type OtlpReceiver,
  type Span,
  startOtlpReceiver,
  tracingEnvForStack,
} from '@outbox/devstack/testing/otlp-receiver';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

let receiver: OtlpReceiver;
let stack: Stack;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // The test stands for a trusted gateway: orders follows its traceparent
  // (tracing.a-callers-traceparent-is-only-linked.test.ts: what an untrusted caller gets).
  const tracing = tracingEnvForStack(receiver);
  tracing.orders = { ...tracing.orders, TRACING_TRUST_INCOMING_TRACEPARENT: 'true' };
  stack = await startStack('tracing', sharedKafkaBrokers(), tracing);
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

/** The trace id in a stored `traceparent` (`00-<trace id>-<span id>-<flags>`). */
const traceIdOf = (traceparent: string | undefined) => traceparent?.split('-')[1];
const spanIdOf = (traceparent: string | undefined) => traceparent?.split('-')[2];

describe('tracing', () => {
  it('follows one order through every service in one trace', async () => {
    // The test is the trace's root: the client span of the POST. Its baggage is not stored.
    const traceId = randomBytes(16).toString('hex');
    const clientSpanId = randomBytes(8).toString('hex');
    const res = await fetch(`${stack.services.orders.url}/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${clientSpanId}-01`,
        baggage: 'test.case=one-order-one-trace',
      },
      body: JSON.stringify({ customerId: 'tracy', currency: 'EUR', items: [{ sku: 'KB-101', quantity: 1 }] }),
    });
    expect(res.status).toBe(201);
    const orderId = ((await res.json()) as { id: string }).id;

    await eventually(
      `order ${orderId} confirmed`,
      async () => {
        const order = (await (await fetch(`${stack.services.orders.url}/orders/${orderId}`)).json()) as {
          status: string;
        };
        return order.status === 'CONFIRMED' ? order : undefined;
      },
      60_000,
    );

    // Every Kafka span of this order: the message key is the order id on every topic.
    const spans = receiver.spans;
    const ofOrder = () => spans.filter((s) => s.attributes['messaging.kafka.message.key'] === orderId);
    const publish = (service: string, type: string) =>
      ofOrder().find(
        (s) =>
          s.service === service && s.kind === 'producer' && s.attributes['cloudevents.event_type'] === type,
      );
    const processed = (service: string, type: string) =>
      ofOrder().find(
        (s) =>
          s.service === service && s.kind === 'consumer' && s.attributes['cloudevents.event_type'] === type,
      );
    const expected = {
      createdPublish: () => publish('relay-orders', 'ORDER_CREATED'),
      inventoryProcess: () => processed('inventory', 'ORDER_CREATED'),
      billingProcess: () => processed('billing', 'ORDER_CREATED'),
      reservedPublish: () => publish('relay-inventory', 'STOCK_RESERVED'),
      authorizedPublish: () => publish('relay-billing', 'PAYMENT_AUTHORIZED'),
      reservedProcess: () => processed('orders', 'STOCK_RESERVED'),
      authorizedProcess: () => processed('orders', 'PAYMENT_AUTHORIZED'),
      confirmedPublish: () => publish('relay-orders', 'ORDER_CONFIRMED'),
      confirmedInventory: () => processed('inventory', 'ORDER_CONFIRMED'),
      confirmedBilling: () => processed('billing', 'ORDER_CONFIRMED'),
    };
    const found = await eventually(
      'the spans of every hop',
      async () => {
        const all = Object.fromEntries(Object.entries(expected).map(([key, find]) => [key, find()]));
        return Object.values(all).every(Boolean) ? (all as Record<keyof typeof expected, Span>) : undefined;
      },
      30_000,
    ).catch((err: unknown) => {
      const missing = Object.entries(expected)
        .filter(([, find]) => !find())
        .map(([key]) => key);
      throw new Error(`${(err as Error).message}; missing: ${missing.join(', ')}`);
    });

    const byId = new Map(spans.map((s) => [s.spanId, s]));
    /** The span's ancestors within the received spans, nearest first. */
    const ancestors = (span: Span): Span[] => {
      const chain: Span[] = [];
      for (
        let parent = byId.get(span.parentSpanId ?? '');
        parent;
        parent = byId.get(parent.parentSpanId ?? '')
      ) {
        chain.push(parent);
      }
      return chain;
    };

    // One trace id, from the client's POST to the confirmation's consumers.
    for (const span of [...Object.values(found), ...ofOrder()]) expect(span.traceId).toBe(traceId);

    // The HTTP server span of POST /orders, a child of the test's client span.
    const server = spans.find((s) => s.traceId === traceId && s.service === 'orders' && s.kind === 'server');
    expect(server?.parentSpanId).toBe(clientSpanId);
    expect(server?.attributes['http.request.method'] ?? server?.attributes['http.method']).toBe('POST');

    // ORDER_CREATED's outbox row holds the context of the request that wrote it, and the relay's
    // publish span is that context's child; the request's spans lead up to the server span.
    const [created] = await queryOnce<{ headers: Record<string, string> }>(
      stack.databases.orders.url,
      `select headers from outbox where aggregate_id = $1 and event_type = 'ORDER_CREATED'`,
      [orderId],
    );
    expect(traceIdOf(created?.headers.traceparent)).toBe(traceId);
    expect(Object.keys(created?.headers ?? {})).toEqual(['traceparent']); // no baggage
    expect(found.createdPublish.parentSpanId).toBe(spanIdOf(created?.headers.traceparent));
    expect(ancestors(found.createdPublish)).toContainEqual(server);

    // Both consumers process ORDER_CREATED as children of relay-orders' publish span.
    expect(found.inventoryProcess.parentSpanId).toBe(found.createdPublish.spanId);
    expect(found.billingProcess.parentSpanId).toBe(found.createdPublish.spanId);

    // Their replies are published as descendants of their processing (the consumer's transaction
    // wrote them to its outbox inside the process span), and orders processes each reply as a child
    // of the reply's publish span.
    expect(ancestors(found.reservedPublish)).toContainEqual(found.inventoryProcess);
    expect(ancestors(found.authorizedPublish)).toContainEqual(found.billingProcess);
    expect(found.reservedProcess.parentSpanId).toBe(found.reservedPublish.spanId);
    expect(found.authorizedProcess.parentSpanId).toBe(found.authorizedPublish.spanId);

    // The second reply confirms the order: ORDER_CONFIRMED's outbox row carries this trace (its
    // traceparent alone), and its publish descends from orders' processing of that reply.
    const [confirmed] = await queryOnce<{ headers: Record<string, string> }>(
      stack.databases.orders.url,
      `select headers from outbox where aggregate_id = $1 and event_type = 'ORDER_CONFIRMED'`,
      [orderId],
    );
    expect(traceIdOf(confirmed?.headers.traceparent)).toBe(traceId);
    expect(Object.keys(confirmed?.headers ?? {})).toEqual(['traceparent']);
    const confirmedBy = ancestors(found.confirmedPublish);
    expect(confirmedBy.includes(found.reservedProcess) || confirmedBy.includes(found.authorizedProcess)).toBe(
      true,
    );
    expect(found.confirmedInventory.parentSpanId).toBe(found.confirmedPublish.spanId);
    expect(found.confirmedBilling.parentSpanId).toBe(found.confirmedPublish.spanId);

    // Only the request and the event hops: no span per SQL statement, pool checkout or Express
    // middleware (docs/tracing.md, "What is traced, what was cut").
    const perStatement = spans.filter(
      (s) =>
        s.traceId === traceId &&
        ((s.attributes['db.system.name'] ?? s.attributes['db.system']) !== undefined ||
          /^(pg[.-]|middleware|router|request handler)/.test(s.name)),
    );
    expect(perStatement.map((s) => `${s.service}: ${s.name}`)).toEqual([]);
  });
});
