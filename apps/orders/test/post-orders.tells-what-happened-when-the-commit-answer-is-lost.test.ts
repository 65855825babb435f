// A connection that breaks while COMMIT is in flight leaves the API not knowing whether the order
// was committed. It must find out (the order id is chosen before the transaction) and answer the
// truth: 201 with the order the server committed, 503 "nothing was written" only when that is
// certain, and otherwise 503 "outcome unknown" naming the order. Through a real Prisma transaction
// on a real PostgreSQL; a proxy cuts the connection at the exact moment of COMMIT.
import { randomUUID } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { defaultDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommitCutter, startCommitCutter } from './support/commitCutter.ts';
import { type OrdersApi, postOrder, rowsOfCustomer, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

let cutter: CommitCutter;
let api: OrdersApi;
beforeAll(async () => {
  cutter = await startCommitCutter(testPostgresUrl);
  api = await startOrdersApi('orders_commit_lost', {
    databaseUrl: (own) => cutter.through(own),
    // A held transaction must outlive the check's wait (the statement timeout) by far, even on a
    // busy machine: the server would otherwise end it as idle and the outcome become certain.
    timeouts: { ...defaultDatabaseTimeouts, DATABASE_TRANSACTION_TIMEOUT_MS: 60_000 },
  });
});
afterAll(async () => {
  await api?.close();
  await cutter?.close();
});

const order = (customerId: string) => ({
  customerId,
  currency: 'EUR',
  items: [{ sku: 'HD-404', quantity: 1 }],
});

const rowsFor = (customerId: string) => rowsOfCustomer(api, customerId);

type Problem = { type: string; detail: string };

describe('POST /orders when the answer to COMMIT is lost', () => {
  it('answers 201 with the order the server committed, and a retry with the same key creates nothing', async () => {
    const key = randomUUID();
    cutter.cutNextCommit('after-the-server-commits');
    const first = await postOrder(api.baseUrl, order('lost-answer'), { 'Idempotency-Key': key });
    expect(cutter.cuts).toBe(1);
    expect(first.status).toBe(201);
    const created = (await first.json()) as { id: string; status: string; totalCents: string };
    expect(first.headers.get('location')).toBe(`/orders/${created.id}`);
    expect(created).toMatchObject({ customerId: 'lost-answer', status: 'PENDING', totalCents: '3900' });
    expect(await rowsFor('lost-answer')).toEqual({ orders: 1, events: 1 });

    const retry = await postOrder(api.baseUrl, order('lost-answer'), { 'Idempotency-Key': key });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(created);
    expect(await rowsFor('lost-answer')).toEqual({ orders: 1, events: 1 });
  });

  it('does not claim an order when the COMMIT never reached the server, and nothing exists', async () => {
    cutter.cutNextCommit('before-the-server-gets-it');
    const res = await postOrder(api.baseUrl, order('never-committed'), { 'Idempotency-Key': randomUUID() });
    expect(cutter.cuts).toBe(2);
    expect(res.status).toBe(503);
    const problem = (await res.json()) as Problem;
    // Certain here: the server rolled the transaction back, and the API waited until it had.
    expect(problem.type).toBe('urn:problem:database-unavailable');
    expect(problem.detail).toContain('Nothing was written');
    expect(await rowsFor('never-committed')).toEqual({ orders: 0, events: 0 });
  });

  it('says the outcome is unknown, naming the order, while the transaction may still commit', async () => {
    const key = randomUUID();
    cutter.cutNextCommit('keep-the-backend-waiting');
    const res = await postOrder(api.baseUrl, order('still-open'), { 'Idempotency-Key': key });
    expect(cutter.cuts).toBe(3);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).not.toBeNull();
    const problem = (await res.json()) as Problem;
    expect(problem.type).toBe('urn:problem:commit-outcome-unknown');
    const orderId = /order ([0-9a-f-]{36})/.exec(problem.detail)?.[1];
    expect(orderId, problem.detail).toBeDefined();
    expect(problem.detail).toContain(`GET /orders/${orderId}`);
    expect(problem.detail).toContain('same Idempotency-Key');
    expect(problem.detail).not.toMatch(/nothing was written/i);

    // The server notices its client is gone and rolls back; the retry then creates the order once.
    cutter.releaseHeld();
    const retry = await postOrder(api.baseUrl, order('still-open'), { 'Idempotency-Key': key });
    expect(retry.status).toBe(201);
    expect(((await retry.json()) as { id: string }).id).not.toBe(orderId);
    expect((await fetch(`${api.baseUrl}/orders/${orderId}`)).status).toBe(404);
    expect(await rowsFor('still-open')).toEqual({ orders: 1, events: 1 });
  });
});
