// The write path of POST /orders: once the catalog has been read, an order is BEGIN + ONE
// statement + COMMIT (Idempotency-Key claim, order, items and ORDER_CREATED together), the
// statement writes nothing unless every price it was given is the catalog's, and requests with
// the same key are serialized by the key's primary key inside that statement.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { orderCreatedV1 } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { prepareEvent } from '@outbox/outbox';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { catalogPricesOf } from '../src/orders/catalogPrices.ts';
import { EVENT_SOURCE, insertOrderWithEvent, newOrder, orderCreated } from '../src/orders/createOrder.ts';
import { requestHash } from '../src/orders/idempotency.ts';
import type { OrderRequest } from '../src/orders/orderRequest.ts';
import { placeOrder } from '../src/orders/placeOrder.ts';
import { type OrdersApi, postOrder, QUEUE_EVERY_REQUEST, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

let api: OrdersApi;
beforeAll(async () => {
  api = await startOrdersApi('orders_write_path', { admission: QUEUE_EVERY_REQUEST });
});
afterAll(() => api?.close());

const request = (customerId: string, sku = 'HD-404', quantity = 1): OrderRequest => ({
  customerId,
  currency: 'EUR',
  items: [{ sku, quantity }],
});

/** Every statement node-postgres sends while `fn` runs (the Prisma adapter goes through it). */
async function statementsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config] = args as [string | { text: string }];
    sent.push(
      (typeof config === 'string' ? config : config.text).trim().split(/\s+/)[0]?.toLowerCase() ?? '',
    );
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent;
}

async function rowsOf(customerId: string) {
  const [row] = await queryOnce<{ orders: number; events: number; keys: number }>(
    api.db.url,
    `select (select count(*) from orders where customer_id = $1)::int as orders,
            (select count(*) from outbox e join orders o on o.id::text = e.aggregate_id
              where o.customer_id = $1)::int as events,
            (select count(*) from idempotency_keys k join orders o on o.id = k.order_id
              where o.customer_id = $1)::int as keys`,
    [customerId],
  );
  return row;
}

describe('the happy path', () => {
  it('is BEGIN, one statement and COMMIT once the catalog has been read, with or without a key', async () => {
    await placeOrder(api.prisma, request('rt-warm-up')); // the first order reads the catalog
    const withoutKey = await statementsOf(() => placeOrder(api.prisma, request('rt-no-key')));
    expect(withoutKey).toEqual(['begin', 'with', 'commit']);
    const withKey = await statementsOf(() => placeOrder(api.prisma, request('rt-key'), randomUUID()));
    expect(withKey).toEqual(['begin', 'with', 'commit']);
    expect(await rowsOf('rt-key')).toEqual({ orders: 1, events: 1, keys: 1 });
  });
});

describe('a catalog that changed after this process read it', () => {
  afterEach(async () => {
    await queryOnce(
      api.db.url,
      `update products set unit_price_cents = 900, currency = 'EUR' where sku = 'CB-505'`,
    );
  });

  it('prices the order at the new price: the statement refuses the old one and the catalog is read again', async () => {
    const before = await postOrder(api.baseUrl, request('price-before', 'CB-505', 2));
    expect(before.status).toBe(201);
    await queryOnce(api.db.url, `update products set unit_price_cents = 1234 where sku = 'CB-505'`);

    const after = await postOrder(api.baseUrl, request('price-after', 'CB-505', 2), {
      'Idempotency-Key': randomUUID(),
    });
    expect(after.status).toBe(201);
    const order = (await after.json()) as { id: string; totalCents: string; items: unknown[] };
    expect(order.totalCents).toBe('2468');
    expect(order.items).toEqual([{ sku: 'CB-505', quantity: 2, unitPriceCents: '1234' }]);
    const [event] = await queryOnce<{ payload: unknown }>(
      api.db.url,
      'select payload from outbox where aggregate_id = $1',
      [order.id],
    );
    expect(orderCreatedV1.parse(event?.payload)).toMatchObject({
      totalCents: '2468',
      items: [{ sku: 'CB-505', quantity: 2, unitPriceCents: '1234' }],
    });
    expect(await rowsOf('price-after')).toEqual({ orders: 1, events: 1, keys: 1 });
  });

  it('refuses a line whose currency changed with 422 naming it, writing nothing', async () => {
    expect((await postOrder(api.baseUrl, request('currency-before', 'CB-505'))).status).toBe(201);
    await queryOnce(api.db.url, `update products set currency = 'USD' where sku = 'CB-505'`);

    const refused = await postOrder(api.baseUrl, request('currency-after', 'CB-505'), {
      'Idempotency-Key': randomUUID(),
    });
    expect(refused.status).toBe(422);
    const problem = (await refused.json()) as { type: string; errors: unknown[] };
    expect(problem.type).toBe('urn:problem:unorderable-items');
    expect(problem.errors).toEqual([{ pointer: '#/items/0/sku', detail: 'CB-505 is sold in USD, not EUR' }]);
    expect(await rowsOf('currency-after')).toEqual({ orders: 0, events: 0, keys: 0 });
  });
});

describe('two requests with the same Idempotency-Key at once', () => {
  /**
   * The first request's transaction, held open after its one statement claimed the key and wrote
   * the order: exactly what a concurrent duplicate meets. `end(commit)` commits or rolls it back.
   */
  async function firstRequestInFlight(key: string, body: OrderRequest) {
    let end: (commit: boolean) => void = () => {};
    const decided = new Promise<boolean>((resolve) => {
      end = resolve;
    });
    let written: (orderId: string) => void = () => {};
    const inFlight = new Promise<string>((resolve) => {
      written = resolve;
    });
    const done = api.prisma
      .$transaction(async (tx) => {
        const pricing = await catalogPricesOf(api.prisma).price(tx, body, true);
        const order = newOrder(randomUUID(), body, pricing.lines);
        const outcome = await insertOrderWithEvent(
          tx,
          order,
          prepareEvent(EVENT_SOURCE, orderCreated(order)),
          {
            key,
            requestHash: requestHash(body),
          },
        );
        expect(outcome.written).toBe(true);
        written(order.id);
        if (!(await decided)) throw new Error('rolled back on purpose');
      })
      .catch((error: Error) => error.message);
    return { orderId: await inFlight, end, done };
  }

  const settled = (promise: Promise<unknown>, ms: number) =>
    Promise.race([promise.then(() => true), sleep(ms, false)]);

  it('makes the second wait for the first to commit, then answers with the first order', async () => {
    const key = randomUUID();
    const body = request('same-key-commit');
    const first = await firstRequestInFlight(key, body);
    const second = placeOrder(api.prisma, body, key);
    expect(await settled(second, 300)).toBe(false); // blocked on the key's primary key
    first.end(true);
    await first.done;
    expect(await second).toMatchObject({ kind: 'replayed', order: { id: first.orderId } });
    expect(await rowsOf('same-key-commit')).toEqual({ orders: 1, events: 1, keys: 1 });
  });

  it('lets the second claim the key and create the order when the first rolls back', async () => {
    const key = randomUUID();
    const body = request('same-key-rollback');
    const first = await firstRequestInFlight(key, body);
    const second = placeOrder(api.prisma, body, key);
    expect(await settled(second, 300)).toBe(false);
    first.end(false);
    expect(await first.done).toBe('rolled back on purpose');
    const result = await second;
    expect(result.kind).toBe('created');
    expect(result).not.toMatchObject({ order: { id: first.orderId } });
    expect(await rowsOf('same-key-rollback')).toEqual({ orders: 1, events: 1, keys: 1 });
  });

  it('answers a different body with the same key 422 once the first committed, writing nothing', async () => {
    const key = randomUUID();
    const first = await firstRequestInFlight(key, request('same-key-other-body'));
    const second = placeOrder(api.prisma, request('same-key-other-body', 'HD-404', 2), key);
    expect(await settled(second, 300)).toBe(false);
    first.end(true);
    await first.done;
    expect(await second).toEqual({ kind: 'key-reused' });
    expect(await rowsOf('same-key-other-body')).toEqual({ orders: 1, events: 1, keys: 1 });
  });

  it('creates one order when 20 requests with one key and two bodies race over HTTP', async () => {
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        postOrder(api.baseUrl, request('same-key-race', 'MS-202', 1 + (i % 2)), { 'Idempotency-Key': key }),
      ),
    );
    const statuses = responses.map((res) => res.status);
    expect(statuses.every((status) => status === 201 || status === 422)).toBe(true);
    const created = responses.filter((res) => res.status === 201 && !res.headers.get('idempotent-replayed'));
    expect(created).toHaveLength(1);
    expect(await rowsOf('same-key-race')).toEqual({ orders: 1, events: 1, keys: 1 });
  });
});
