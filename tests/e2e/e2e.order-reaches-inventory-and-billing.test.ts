import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('e2e', sharedKafkaBrokers());
});
afterAll(() => stack?.stop());

async function placeOrder(body: unknown): Promise<Response> {
  return fetch(`${stack.services.orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('walking skeleton: POST /orders → outbox → relay → Kafka → inventory and billing', () => {
  it('delivers an order to inventory and billing exactly once each', async () => {
    const res = await placeOrder({
      customerId: 'c-1',
      currency: 'EUR',
      items: [
        { sku: 'KB-101', quantity: 2 },
        { sku: 'CB-505', quantity: 3 },
      ],
    });
    expect(res.status).toBe(201);
    const order = (await res.json()) as { id: string; totalCents: string; status: string };
    expect(order.totalCents).toBe(String(2 * 8900 + 3 * 900));
    expect(res.headers.get('location')).toBe(`/orders/${order.id}`);

    const { databases } = stack;
    const [event] = await queryOnce<{ id: string; status: string }>(
      databases.orders.url,
      `select id, status from outbox where aggregate_id = $1`,
      [order.id],
    );
    expect(event).toBeDefined();

    const reservation = await eventually('inventory reserved the order', async () => {
      const rows = await queryOnce<{ status: string }>(
        databases.inventory.url,
        'select status from reservations where order_id = $1',
        [order.id],
      );
      return rows[0];
    });
    expect(reservation.status).toBe('RESERVED');
    const payment = await eventually('billing authorized the payment', async () => {
      const rows = await queryOnce<{ status: string; amount_cents: string; event_id: string }>(
        databases.billing.url,
        'select status, amount_cents, event_id from payments where order_id = $1',
        [order.id],
      );
      return rows[0];
    });
    expect(payment).toEqual({ status: 'AUTHORIZED', amount_cents: order.totalCents, event_id: event?.id });

    // Each consumer recorded the event once, in the same transaction as its effect.
    for (const db of [databases.inventory, databases.billing]) {
      const processed = await queryOnce(db.url, 'select event_id from processed_events where event_id = $1', [
        event?.id,
      ]);
      expect(processed).toHaveLength(1);
    }
    const [stock] = await queryOnce<{ available: number }>(
      databases.inventory.url,
      `select available from stock where sku = 'KB-101'`,
    );
    expect(stock?.available).toBe(100 - 2);
    const [published] = await queryOnce<{ status: string }>(
      databases.orders.url,
      'select status from outbox where id = $1',
      [event?.id],
    );
    expect(published?.status).toBe('published');

    // Both replies come back to orders, whose /healthz reports its reply consumer like the others do.
    const health = await eventually('orders applied both replies', async () => {
      const body = (await (await fetch(`${stack.services.orders.url}/healthz`)).json()) as {
        status: string;
        replies?: { applied: number; duplicates: number };
      };
      return (body.replies?.applied ?? 0) >= 2 ? body : undefined;
    });
    expect(health).toMatchObject({ status: 'ok', replies: { applied: 2, duplicates: 0 } });
  });

  it('rejects an invalid order with 400, names the fields, and writes nothing', async () => {
    const before = await queryOnce<{ count: string }>(
      stack.databases.orders.url,
      'select count(*) from outbox',
    );
    const res = await placeOrder({
      customerId: '',
      currency: 'euro',
      items: [{ sku: 'KB-101', quantity: 0 }],
      x: 1,
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await res.json()) as { errors: { pointer: string }[] };
    expect(problem.errors.map((e) => e.pointer).sort()).toEqual(
      ['#/customerId', '#/currency', '#/items/0/quantity', '#/x'].sort(),
    );
    const after = await queryOnce<{ count: string }>(
      stack.databases.orders.url,
      'select count(*) from outbox',
    );
    expect(after).toEqual(before);
    const orders = await queryOnce<{ count: string }>(
      stack.databases.orders.url,
      'select count(*) from orders',
    );
    expect(orders[0]?.count).toBe('1');
  });
});
