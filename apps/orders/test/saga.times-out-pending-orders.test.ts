// The saga has a timeout: an order left PENDING too long is cancelled through the same transaction
// and outbox path as a reply, once, and a compensation still owed too long after a cancellation is
// asked for once more. Real database, the real reply handlers through applyOnce, the real sweeper.
import { randomUUID } from 'node:crypto';
import {
  type EventEnvelope,
  PAYMENT_AUTHORIZED,
  PAYMENT_VOIDED,
  STOCK_RELEASED,
  STOCK_RESERVED,
} from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { loadConfig } from '@outbox/runtime/config';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../src/config.ts';
import { startSagaTimeout, sweepSagaTimeouts } from '../src/saga/sagaTimeout.ts';
import { deliverReply } from './support/deliverReply.ts';
import { type OrdersApi, postOrder, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

const TIMEOUT_MS = 60_000;

let api: OrdersApi;
beforeAll(async () => {
  api = await startOrdersApi('orders_saga_timeout');
});
afterAll(() => api?.close());

const replyData: Record<string, (orderId: string) => unknown> = {
  [STOCK_RESERVED]: (orderId) => ({ orderId, items: [{ sku: 'KB-101', quantity: 1 }] }),
  [STOCK_RELEASED]: (orderId) => ({ orderId }),
  [PAYMENT_AUTHORIZED]: (orderId) => ({
    orderId,
    authorizationId: 'auth_1',
    amountCents: '8900',
    currency: 'EUR',
  }),
  [PAYMENT_VOIDED]: (orderId) => ({ orderId, authorizationId: 'auth_1' }),
};

async function deliver(type: string, orderId: string): Promise<void> {
  const event = {
    id: randomUUID(),
    type,
    subject: orderId,
    schemaversion: 1,
    data: replyData[type]?.(orderId),
  } as EventEnvelope;
  await deliverReply(api.prisma, event);
}

async function newOrder(): Promise<string> {
  const res = await postOrder(api.baseUrl, {
    customerId: 'slow-saga',
    currency: 'EUR',
    items: [{ sku: 'KB-101', quantity: 1 }],
  });
  return ((await res.json()) as { id: string }).id;
}

/** Make the order look `ms` older: placed (and decided, if it is) that long ago. */
const age = (orderId: string, ms: number) =>
  queryOnce(
    api.db.url,
    `update orders set created_at = created_at - make_interval(secs => $2::float8),
                       decided_at = decided_at - make_interval(secs => $2::float8)
      where id = $1`,
    [orderId, ms / 1000],
  );

async function stateOf(orderId: string) {
  const [order] = await queryOnce<{
    status: string;
    stock_status: string | null;
    payment_status: string | null;
    cancel_reason: string | null;
  }>(api.db.url, 'select status, stock_status, payment_status, cancel_reason from orders where id = $1', [
    orderId,
  ]);
  const events = await queryOnce<{ event_type: string }>(
    api.db.url,
    `select event_type from outbox where aggregate_id = $1 and event_type <> 'ORDER_CREATED' order by seq`,
    [orderId],
  );
  return { ...order, events: events.map((row) => row.event_type) };
}

describe('saga timeout', () => {
  it('cancels an order PENDING longer than the timeout, once, and leaves younger ones alone', async () => {
    const [stale, young] = [await newOrder(), await newOrder()];
    await age(stale, TIMEOUT_MS + 1_000);
    expect(await sweepSagaTimeouts(api.prisma, { timeoutMs: TIMEOUT_MS })).toMatchObject({ timedOut: 1 });
    expect(await stateOf(stale)).toEqual({
      status: 'CANCELLED',
      stock_status: null,
      payment_status: null,
      cancel_reason: `saga timed out: no answer from inventory and billing within ${TIMEOUT_MS} ms`,
      events: ['ORDER_CANCELLED'],
    });
    expect((await stateOf(young)).status).toBe('PENDING');
    expect(await sweepSagaTimeouts(api.prisma, { timeoutMs: TIMEOUT_MS })).toEqual({
      timedOut: 0,
      cancelResent: 0,
    });
  });

  it('a grant that arrives after the timeout is recorded, changes no decision, and is given back', async () => {
    const orderId = await newOrder();
    await deliver(STOCK_RESERVED, orderId);
    await age(orderId, TIMEOUT_MS + 1_000);
    await sweepSagaTimeouts(api.prisma, { timeoutMs: TIMEOUT_MS });
    await deliver(PAYMENT_AUTHORIZED, orderId); // billing answers late
    expect(await stateOf(orderId)).toMatchObject({
      status: 'CANCELLED',
      stock_status: 'RESERVED',
      payment_status: 'AUTHORIZED',
      cancel_reason: `saga timed out: no answer from billing within ${TIMEOUT_MS} ms`,
      events: ['ORDER_CANCELLED'],
    });
    // The ORDER_CANCELLED makes both sides give back what they granted.
    await deliver(STOCK_RELEASED, orderId);
    await deliver(PAYMENT_VOIDED, orderId);
    // A replayed STOCK_RESERVED after its release does not move inventory's side back.
    await deliver(STOCK_RESERVED, orderId);
    await age(orderId, TIMEOUT_MS + 1_000);
    expect(await sweepSagaTimeouts(api.prisma, { timeoutMs: TIMEOUT_MS })).toEqual({
      timedOut: 0,
      cancelResent: 0,
    });
    expect(await stateOf(orderId)).toMatchObject({
      status: 'CANCELLED',
      stock_status: 'RELEASED',
      payment_status: 'VOIDED',
      events: ['ORDER_CANCELLED'],
    });
  });

  it('a cancelled order whose grant is never given back gets its ORDER_CANCELLED once more, once', async () => {
    const orderId = await newOrder();
    await age(orderId, TIMEOUT_MS + 1_000);
    await sweepSagaTimeouts(api.prisma, { timeoutMs: TIMEOUT_MS });
    await deliver(STOCK_RESERVED, orderId); // a side that reserved after the cancel, and lost it
    await deliver(PAYMENT_AUTHORIZED, orderId);
    await deliver(PAYMENT_VOIDED, orderId); // billing gave its grant back; inventory never does
    expect(await sweepSagaTimeouts(api.prisma, { timeoutMs: TIMEOUT_MS })).toMatchObject({ cancelResent: 0 });
    await age(orderId, TIMEOUT_MS + 1_000);
    expect(await sweepSagaTimeouts(api.prisma, { timeoutMs: TIMEOUT_MS })).toEqual({
      timedOut: 0,
      cancelResent: 1,
    });
    expect(await sweepSagaTimeouts(api.prisma, { timeoutMs: TIMEOUT_MS })).toEqual({
      timedOut: 0,
      cancelResent: 0,
    });
    expect((await stateOf(orderId)).events).toEqual(['ORDER_CANCELLED', 'ORDER_CANCELLED']);
    const history = await queryOnce<{ event_type: string }>(
      api.db.url,
      'select event_type from order_history where order_id = $1 order by id',
      [orderId],
    );
    expect(history.map((row) => row.event_type)).toContain('ORDER_CANCELLED_RESENT');
  });

  it('runs in the background: an order nobody answers is cancelled after the timeout', async () => {
    const registry = createMetricsRegistry('orders-saga-timeout-test');
    const sweeper = startSagaTimeout({
      prisma: api.prisma,
      logger: pino({ level: 'silent' }),
      timeoutMs: 1_000,
      intervalMs: 200,
      registry,
    });
    try {
      const orderId = await newOrder();
      const cancelled = await eventually('the order cancelled by the timeout', async () => {
        const state = await stateOf(orderId);
        return state.status === 'CANCELLED' ? state : undefined;
      });
      expect(cancelled.events).toEqual(['ORDER_CANCELLED']);
      expect(await registry.metrics()).toMatch(/^saga_orders_timed_out_total\{[^}]*\} [1-9]/m);
    } finally {
      await sweeper.stop();
    }
  });

  it('refuses a sweep interval longer than the timeout, naming the variable', () => {
    const env = {
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/orders',
      KAFKA_BROKERS: '127.0.0.1:9092',
      SAGA_TIMEOUT_MS: '5000',
      SAGA_SWEEP_INTERVAL_MS: '60000',
    };
    expect(() => loadConfig('orders', configSchema, env)).toThrow(/SAGA_SWEEP_INTERVAL_MS/);
    expect(loadConfig('orders', configSchema, { ...env, SAGA_SWEEP_INTERVAL_MS: '1000' })).toMatchObject({
      SAGA_TIMEOUT_MS: 5000,
      SAGA_SWEEP_INTERVAL_MS: 1000,
    });
  });
});
