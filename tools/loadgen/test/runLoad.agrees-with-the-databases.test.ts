// runLoad and collectOutcome against the whole system as real processes: what the load
// generator reports must be what the three databases say happened.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectOutcome, formatSummary, type LoadResult, type Outcome, runLoad } from '../src/index.ts';

useLeakGuard();

let stack: Stack;
let result: LoadResult;
let outcome: Outcome;

beforeAll(async () => {
  stack = await startStack('loadgen', sharedKafkaBrokers());
  result = await runLoad({
    ordersUrl: stack.services.orders.url,
    rate: 25,
    count: 48,
    mix: { valid: 55, outOfStock: 15, declined: 15, invalid: 15 },
    seed: 2024,
  });
  const accepted = result.orders.filter((order) => order.orderId !== undefined);
  outcome = await collectOutcome({
    databaseUrls: {
      orders: stack.databases.orders.url,
      inventory: stack.databases.inventory.url,
      billing: stack.databases.billing.url,
    },
    orderIds: accepted.map((order) => order.orderId as string),
    kinds: Object.fromEntries(accepted.map((order) => [order.orderId, order.kind])),
    metricsUrls: {
      orders: stack.services.orders.url,
      inventory: stack.services.inventory.url,
      billing: stack.services.billing.url,
    },
    timeoutMs: 40_000,
  });
  console.log(formatSummary(result, outcome));
});
afterAll(() => stack?.stop());

const count = (kind: string) => result.orders.filter((order) => order.kind === kind).length;

describe('a load run against the real system', () => {
  it('sent every kind of order, and created exactly the orders it counts as accepted', async () => {
    expect(result.orders).toHaveLength(48);
    for (const kind of ['valid', 'outOfStock', 'declined', 'invalid'])
      expect(count(kind), kind).toBeGreaterThan(0);
    const [orders] = await queryOnce<{ n: number }>(
      stack.databases.orders.url,
      'select count(*)::int as n from orders',
    );
    const [keys] = await queryOnce<{ n: number }>(
      stack.databases.orders.url,
      'select count(*)::int as n from idempotency_keys',
    );
    expect(result.accepted).toBe(48 - count('invalid'));
    expect(orders?.n).toBe(result.accepted);
    expect(keys?.n).toBe(result.accepted);
  });

  it('every invalid request got the 4xx problem its fault calls for, and created nothing', () => {
    for (const order of result.orders.filter((o) => o.kind === 'invalid')) {
      expect(order.status, order.fault?.name).toBe(order.fault?.expectedStatus);
      expect(order.orderId).toBeUndefined();
      expect(order.problem?.type).toMatch(/^urn:problem:/);
    }
    const refused = Object.values(result.rejected).reduce((sum, n) => sum + n, 0);
    expect(refused).toBe(count('invalid'));
  });

  it('each accepted order ended as its kind implies, in the orders database', async () => {
    const rows = await queryOnce<{ id: string; status: string; cancel_reason: string | null }>(
      stack.databases.orders.url,
      'select id::text, status, cancel_reason from orders',
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const order of result.orders.filter((o) => o.orderId !== undefined)) {
      const row = byId.get(order.orderId as string);
      if (order.kind === 'valid') expect(row?.status).toBe('CONFIRMED');
      else expect(row?.status).toBe('CANCELLED');
      if (order.kind === 'declined') expect(row?.cancel_reason).toBe('card declined by issuer');
      if (order.kind === 'outOfStock') expect(row?.cancel_reason).toMatch(/^insufficient stock for /);
    }
    expect(outcome.finalStatesByKind?.valid).toEqual({ CONFIRMED: count('valid') });
    expect(outcome.finalStatesByKind?.declined).toEqual({
      'CANCELLED: card declined by issuer': count('declined'),
    });
    expect(outcome.pending).toEqual([]);
    expect(outcome.settled).toBe(true);
  });

  it('measures latency from the database timestamps: 0 < p50 ≤ p95 ≤ p99 ≤ max', () => {
    const { p50, p95, p99, max, count: measured } = outcome.latencyMs;
    expect(measured).toBe(count('valid'));
    expect(p50).toBeGreaterThan(0);
    expect(p50).toBeLessThanOrEqual(p95);
    expect(p95).toBeLessThanOrEqual(p99);
    expect(p99).toBeLessThanOrEqual(max);
    expect(outcome.cancelLatencyMs.count).toBe(count('declined') + count('outOfStock'));
  });

  it('counts the events the saga implies, all published, and every one consumed once', () => {
    const [valid, outOfStock, declined] = [count('valid'), count('outOfStock'), count('declined')];
    const accepted = valid + outOfStock + declined;
    expect(outcome.events.publishedByType).toEqual({
      ORDER_CREATED: accepted,
      ORDER_CONFIRMED: valid,
      ORDER_CANCELLED: outOfStock + declined,
      STOCK_RESERVED: valid + declined,
      STOCK_REJECTED: outOfStock,
      STOCK_RELEASED: declined, // a declined order's stock is given back
      PAYMENT_AUTHORIZED: valid + outOfStock,
      PAYMENT_DECLINED: declined,
      PAYMENT_VOIDED: outOfStock, // an out-of-stock order's payment is voided
    });
    expect(outcome.events.published).toEqual({
      orders: 2 * accepted,
      inventory: accepted + declined,
      billing: accepted + outOfStock,
    });
    expect(outcome.events.pending).toEqual({ orders: 0, inventory: 0, billing: 0 });
    expect(outcome.events.failed).toEqual({ orders: 0, inventory: 0, billing: 0 });

    // inventory and billing apply ORDER_CREATED and ORDER_CANCELLED (ORDER_CONFIRMED is not for
    // them); orders applies every reply.
    const prefix = stack.topicPrefix;
    expect(outcome.consumed).toEqual({
      [`${prefix}inventory`]: accepted + outOfStock + declined,
      [`${prefix}billing`]: accepted + outOfStock + declined,
      [`${prefix}orders`]: 2 * accepted + outOfStock + declined,
    });
    expect(outcome.warnings).toEqual([]);
    expect(Object.values(outcome.duplicatesSkipped ?? { missing: -1 }).every((n) => n === 0)).toBe(true);
  });
});
