// An order whose statement the server cancels on its statement_timeout (here: waiting on a lock a
// test session holds on `orders`) was rolled back. The API says so: 503 database-timeout with
// Retry-After, not a 500, and the same request sent again with its key creates the order once.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OrdersApi, postOrder, rowsOfCustomer, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

const order = { customerId: 'timed-out', currency: 'EUR', items: [{ sku: 'KB-101', quantity: 1 }] };

let api: OrdersApi;
let locker: pg.Client | undefined;
beforeAll(async () => {
  api = await startOrdersApi('orders_statement_timeout', {
    timeouts: {
      DATABASE_CONNECT_TIMEOUT_MS: 5_000,
      DATABASE_STATEMENT_TIMEOUT_MS: 500,
      DATABASE_TRANSACTION_TIMEOUT_MS: 10_000,
    },
  });
});
afterAll(async () => {
  await locker?.end();
  await api?.close();
});

describe('POST /orders when a statement times out', () => {
  it('answers 503 database-timeout with Retry-After, writes nothing, and the retry with the same key creates the order', async () => {
    locker = new pg.Client({ connectionString: api.db.url });
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table orders in exclusive mode');

    const key = { 'idempotency-key': 'statement-timeout-1' };
    const timedOut = await postOrder(api.baseUrl, order, key);
    const body = (await timedOut.json()) as { type: string; status: number; detail: string };
    expect(timedOut.status).toBe(503);
    expect(timedOut.headers.get('content-type')).toContain('application/problem+json');
    expect(timedOut.headers.get('retry-after')).toBe('5');
    expect(body).toMatchObject({ type: 'urn:problem:database-timeout', status: 503 });
    expect(body.detail).toContain('Nothing was written');

    await locker.query('rollback');
    expect(await rowsOfCustomer(api, 'timed-out')).toEqual({ orders: 0, events: 0 });

    const retried = await postOrder(api.baseUrl, order, key);
    expect(retried.status).toBe(201);
    expect(await rowsOfCustomer(api, 'timed-out')).toEqual({ orders: 1, events: 1 });
  });
});
