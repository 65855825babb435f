// GET /orders: newest first, filtered by status, keyset-paged with a cursor.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OrdersApi, postOrder, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

type Page = { items: { id: string; status: string; customerId: string }[]; nextCursor?: string };

let api: OrdersApi;
const created: string[] = [];
beforeAll(async () => {
  api = await startOrdersApi('orders_list');
  for (let i = 0; i < 7; i++) {
    const res = await postOrder(api.baseUrl, {
      customerId: `list-${i}`,
      currency: 'EUR',
      items: [{ sku: 'CB-505', quantity: 1 }],
    });
    created.push(((await res.json()) as { id: string }).id);
  }
  // Two orders get a final status (the saga will do this; here the test sets it directly).
  await queryOnce(api.db.url, `update orders set status = 'CONFIRMED' where id = any($1::uuid[])`, [
    [created[1], created[4]],
  ]);
});
afterAll(() => api?.close());

const get = async (query: string) => {
  const res = await fetch(`${api.baseUrl}/orders${query}`);
  return { status: res.status, body: (await res.json()) as Page & { errors?: { parameter: string }[] } };
};

describe('GET /orders', () => {
  it('pages through every order exactly once, newest first', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { status, body } = await get(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(status).toBe(200);
      seen.push(...body.items.map((order) => order.id));
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...created].reverse());
  });

  it('filters by status', async () => {
    const { body } = await get('?status=CONFIRMED');
    expect(body.items.map((order) => order.id).sort()).toEqual([created[1], created[4]].sort());
    expect(body.nextCursor).toBeUndefined();
  });

  it.each([
    ['?limit=0', 'limit'],
    ['?limit=101', 'limit'],
    ['?status=SHIPPED', 'status'],
    ['?cursor=garbage', 'cursor'],
    ['?sort=asc', 'sort'],
  ])('answers %s with 400 naming the parameter', async (query, parameter) => {
    const { status, body } = await get(query);
    expect(status).toBe(400);
    expect(body.errors?.map((error) => error.parameter)).toEqual([parameter]);
  });
});
