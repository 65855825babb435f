// When the orders database cannot be reached, the API says so (503 + Retry-After) instead of 500,
// and a client can retry safely because nothing was written.

import { freePort } from '@outbox/devstack/ports';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OrdersApi, postOrder, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

let api: OrdersApi;
beforeAll(async () => {
  // Nothing listens on this port: every query fails to connect, as when PostgreSQL is down.
  api = await startOrdersApi('orders_dbdown', {
    databaseUrl: `postgresql://postgres@127.0.0.1:${await freePort()}/orders`,
  });
});
afterAll(() => api?.close());

describe('orders API with the database down', () => {
  it('answers POST /orders with 503 problem+json and a Retry-After hint', async () => {
    const res = await postOrder(api.baseUrl, {
      customerId: 'c',
      currency: 'EUR',
      items: [{ sku: 'KB-101', quantity: 1 }],
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(((await res.json()) as { type: string }).type).toBe('urn:problem:database-unavailable');
  });

  it('answers GET /orders with 503 too', async () => {
    expect((await fetch(`${api.baseUrl}/orders`)).status).toBe(503);
  });
});
