// Rate-limited head sampling (docs/tracing.md, "Sampling: bounded cost under load"): with every
// process limited to one new trace a second, a burst of orders gets a few traced and the rest
// sampled out. A traced order's trace is whole across the six processes; a sampled-out order left
// no span anywhere, yet its context still travelled (its outbox rows carry its trace id, flag 00).
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

const ORDERS = 12;

let receiver: OtlpReceiver;
let stack: Stack;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const tracing = tracingEnvForStack(receiver);
  const limited = Object.fromEntries(
    Object.entries(tracing).map(([name, env]) => [name, { ...env, TRACING_MAX_TRACES_PER_SECOND: '1' }]),
  );
  stack = await startStack('sampling', sharedKafkaBrokers(), limited);
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

/** Every span of one whole order: the request, and each event's publish and processing. */
const HOPS = [
  ['orders', 'server', undefined],
  ['relay-orders', 'producer', 'ORDER_CREATED'],
  ['inventory', 'consumer', 'ORDER_CREATED'],
  ['billing', 'consumer', 'ORDER_CREATED'],
  ['relay-inventory', 'producer', 'STOCK_RESERVED'],
  ['relay-billing', 'producer', 'PAYMENT_AUTHORIZED'],
  ['orders', 'consumer', 'STOCK_RESERVED'],
  ['orders', 'consumer', 'PAYMENT_AUTHORIZED'],
  ['relay-orders', 'producer', 'ORDER_CONFIRMED'],
  ['inventory', 'consumer', 'ORDER_CONFIRMED'],
  ['billing', 'consumer', 'ORDER_CONFIRMED'],
] as const;

const hopsOf = (spans: Span[]) =>
  HOPS.filter(([service, kind, type]) =>
    spans.some(
      (s) => s.service === service && s.kind === kind && s.attributes['cloudevents.event_type'] === type,
    ),
  );

async function storedTraceparents(orderId: string): Promise<Record<string, string | undefined>> {
  const rows = await Promise.all(
    (['orders', 'inventory', 'billing'] as const).map((db) =>
      queryOnce<{ event_type: string; traceparent: string | null }>(
        stack.databases[db].url,
        `select event_type, headers->>'traceparent' as traceparent from outbox where aggregate_id = $1`,
        [orderId],
      ),
    ),
  );
  return Object.fromEntries(rows.flat().map((row) => [row.event_type, row.traceparent ?? undefined]));
}

describe('rate-limited head sampling', () => {
  it('traces some orders of a burst whole across the six processes, and records nothing of the others', async () => {
    // One after the other: all at once, the orders API sheds some (503 overloaded, its admission).
    const orderIds: string[] = [];
    for (let n = 0; n < ORDERS; n++) {
      const res = await fetch(`${stack.services.orders.url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          customerId: `burst-${n}`,
          currency: 'EUR',
          items: [{ sku: 'KB-101', quantity: 1 }],
        }),
      });
      expect(res.status).toBe(201);
      orderIds.push(((await res.json()) as { id: string }).id);
    }
    await eventually(
      `all ${ORDERS} orders confirmed`,
      async () => {
        const rows = await queryOnce<{ n: number }>(
          stack.databases.orders.url,
          `select count(*)::int as n from orders where id = any($1::uuid[]) and status = 'CONFIRMED'`,
          [orderIds],
        );
        return rows[0]?.n === ORDERS ? true : undefined;
      },
      90_000,
    );

    // The sampling decision, as every process after orders saw it: ORDER_CREATED's traceparent.
    const orders = await Promise.all(
      orderIds.map(async (orderId) => {
        const stored = await storedTraceparents(orderId);
        const [, traceId, , flags] = stored.ORDER_CREATED?.split('-') ?? [];
        return { orderId, stored, traceId: traceId ?? '', sampled: flags === '01' };
      }),
    );
    const sampled = orders.filter((order) => order.sampled);
    const sampledOut = orders.filter((order) => !order.sampled);
    // One token at start and one a second after: the burst is over long before most are refilled.
    expect(sampled.length).toBeGreaterThanOrEqual(1);
    expect(sampledOut.length).toBeGreaterThanOrEqual(ORDERS / 2);

    // Every traced order: all eleven spans, in its own trace.
    const received = () => receiver.spans;
    await eventually(
      'every traced order whole',
      async () =>
        sampled.every(
          (order) => hopsOf(received().filter((s) => s.traceId === order.traceId)).length === HOPS.length,
        ) || undefined,
      30_000,
    );
    for (const order of sampled) {
      const ofOrder = received().filter((s) => s.attributes['messaging.kafka.message.key'] === order.orderId);
      expect(new Set(ofOrder.map((s) => s.traceId))).toEqual(new Set([order.traceId]));
    }

    // The spans of the last hops of the traced orders are in; those of the others would be too.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const order of sampledOut) {
      const recorded = received().filter(
        (s) => s.traceId === order.traceId || s.attributes['messaging.kafka.message.key'] === order.orderId,
      );
      expect(
        recorded.map((s) => `${s.service}: ${s.name}`),
        `order ${order.orderId}`,
      ).toEqual([]);
      // Not recorded, but propagated: every reply and the decision carry the order's trace, unsampled.
      for (const type of ['STOCK_RESERVED', 'PAYMENT_AUTHORIZED', 'ORDER_CONFIRMED']) {
        expect(order.stored[type], `${type} of ${order.orderId}`).toMatch(
          new RegExp(`^00-${order.traceId}-[0-9a-f]{16}-00$`),
        );
      }
    }
  });
});
