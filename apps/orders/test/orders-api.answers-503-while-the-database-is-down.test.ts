// When the orders database cannot be reached, the API says so (503 + Retry-After) instead of 500,
// and a client can retry safely because nothing was written.

import { freePort } from '@outbox/devstack/ports';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { type PrivatePostgres, startPrivatePostgres } from '@outbox/devstack/testing/private-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OrdersApi, postOrder, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

const ORDER = { customerId: 'c', currency: 'EUR', items: [{ sku: 'KB-101', quantity: 1 }] };

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
    const res = await postOrder(api.baseUrl, ORDER);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(((await res.json()) as { type: string }).type).toBe('urn:problem:database-unavailable');
  });

  it('answers GET /orders and /healthz with 503 too', async () => {
    expect((await fetch(`${api.baseUrl}/orders`)).status).toBe(503);
    expect((await fetch(`${api.baseUrl}/healthz`)).status).toBe(503);
  });
});

// A server that is up but not accepting connections yet, as after a crash while it recovers: it
// answers each connection with SQLSTATE 57P03, which Prisma wraps in its generic P2039. The chaos
// scenario postgres-restart caught /healthz and POST /orders answering 500 for it.
describe('orders API while PostgreSQL starts up', () => {
  let starting: PrivatePostgres;
  let startingApi: OrdersApi;
  beforeAll(async () => {
    starting = await startPrivatePostgres({ refusingConnections: true });
    startingApi = await startOrdersApi('orders_dbstarting', { databaseUrl: starting.url });
  }, 120_000);
  afterAll(async () => {
    await startingApi?.close();
    await starting?.remove();
  });

  it('answers POST /orders and /healthz with 503 database-unavailable', async () => {
    const order = await postOrder(startingApi.baseUrl, ORDER);
    expect(order.status).toBe(503);
    expect(((await order.json()) as { type: string }).type).toBe('urn:problem:database-unavailable');
    const health = await fetch(`${startingApi.baseUrl}/healthz`);
    expect(health.status).toBe(503);
    expect(((await health.json()) as { type: string }).type).toBe('urn:problem:database-unavailable');
  });
});
