// At low rates a transaction slot is always free and each order would commit alone. With a linger
// (ORDER_WRITE_LINGER_MS), an order waits that long for others to share its transaction, and a
// batch that fills up is written at once. Real API, real database; which orders shared a
// transaction is read from the rows' xmin.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OrdersApi, postOrder, QUEUE_EVERY_REQUEST, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

const LINGER_MS = 3_000;
const MAX_BATCH = 3;

let api: OrdersApi;
beforeAll(async () => {
  api = await startOrdersApi('orders_linger', {
    admission: QUEUE_EVERY_REQUEST,
    orderBatches: { maxBatch: MAX_BATCH, concurrency: 2, lingerMs: LINGER_MS },
  });
});
afterAll(() => api?.close());

const order = (customerId: string) => ({
  customerId,
  currency: 'EUR',
  items: [{ sku: 'MS-202', quantity: 1 }],
});

/** Send the orders at once; each answer's status and how long it took on the client's clock. */
async function sendTogether(customers: string[]) {
  const started = performance.now();
  return Promise.all(
    customers.map(async (customer) => {
      const res = await postOrder(api.baseUrl, order(customer));
      return { status: res.status, ms: performance.now() - started };
    }),
  );
}

/** How many of the customers' orders each transaction wrote, ascending. */
async function ordersPerTransaction(customers: string[]): Promise<number[]> {
  const rows = await queryOnce<{ n: number }>(
    api.db.url,
    `select count(*)::int as n from orders where customer_id = any($1) group by xmin::text`,
    [customers],
  );
  return rows.map((row) => row.n).sort((a, b) => a - b);
}

describe('POST /orders with a linger', () => {
  it('holds an order that finds a slot free until others join it, then writes them in one transaction', async () => {
    const customers = ['linger-a', 'linger-b'];
    const answers = await sendTogether(customers);
    expect(answers.map((a) => a.status)).toEqual([201, 201]);
    // Neither was written before the first had lingered its whole time, though both slots were free.
    for (const { ms } of answers) expect(ms).toBeGreaterThanOrEqual(LINGER_MS);
    expect(await ordersPerTransaction(customers)).toEqual([2]);
  });

  it('writes a batch that fills up at once, without waiting out the linger', async () => {
    const customers = ['full-a', 'full-b', 'full-c'];
    const answers = await sendTogether(customers);
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
    for (const { ms } of answers) expect(ms).toBeLessThan(LINGER_MS);
    expect(await ordersPerTransaction(customers)).toEqual([MAX_BATCH]);
  });
});
