// POST /orders and GET /orders/:id against a real PostgreSQL database: every way a request can be
// wrong gets an RFC 9457 problem naming the offending fields and writes nothing; a valid order is
// priced from the catalog and written together with its ORDER_CREATED event, or not at all.

import { randomUUID } from 'node:crypto';
import { ORDER_CREATED, orderCreatedV1 } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ITEMS, MAX_QUANTITY } from '../src/orders/orderRequest.ts';
import { type OrdersApi, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

let api: OrdersApi;
let db: TestDatabase;
let baseUrl: string;

beforeAll(async () => {
  api = await startOrdersApi('orders_http');
  ({ db, baseUrl } = api);
});

afterAll(() => api?.close());

// --- helpers ---------------------------------------------------------------------------------

type Problem = {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  errors?: { pointer: string; detail: string }[];
};

type OrderResource = {
  id: string;
  customerId: string;
  currency: string;
  status: string;
  totalCents: string;
  createdAt: string;
  items: { sku: string; quantity: number; unitPriceCents: string }[];
};

const validOrder = () => ({
  customerId: 'customer-1',
  currency: 'EUR',
  items: [{ sku: 'KB-101', quantity: 1 }],
});

function postRaw(body: string, contentType = 'application/json'): Promise<Response> {
  return fetch(`${baseUrl}/orders`, { method: 'POST', headers: { 'content-type': contentType }, body });
}

const postJson = (value: unknown) => postRaw(JSON.stringify(value));

type RowCounts = { orders: number; order_items: number; outbox: number };

async function rowCounts(): Promise<RowCounts> {
  const [row] = await queryOnce<RowCounts>(
    db.url,
    `select (select count(*) from orders)::int      as orders,
            (select count(*) from order_items)::int as order_items,
            (select count(*) from outbox)::int      as outbox`,
  );
  if (!row) throw new Error('count query returned no row');
  return row;
}

/**
 * Send a request that must be refused, check the problem+json answer, and check that the
 * database did not change: no order, no order item and no event was written.
 */
async function expectRefused(
  send: () => Promise<Response>,
  expected: { status: number; type: string; pointers?: string[] },
): Promise<Problem> {
  const before = await rowCounts();
  const response = await send();
  const problem = (await response.json()) as Problem;

  expect(response.status, JSON.stringify(problem)).toBe(expected.status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json(;|$)/);
  expect(problem.type).toBe(expected.type);
  expect(problem.status).toBe(expected.status);
  expect(problem.title).toEqual(expect.any(String));
  expect(problem.detail).toEqual(expect.any(String));
  if (expected.pointers) {
    expect(problem.errors?.map((error) => error.pointer)).toEqual(expected.pointers);
  }
  expect(await rowCounts()).toEqual(before);
  return problem;
}

const VALIDATION = 'urn:problem:validation';
const UNORDERABLE = 'urn:problem:unorderable-items';
const NOT_FOUND = 'urn:problem:not-found';

// --- refused before reaching the database -----------------------------------------------------

describe('POST /orders refuses a body it cannot read', () => {
  it('answers malformed JSON with 400 malformed-json', async () => {
    const problem = await expectRefused(() => postRaw('{"customerId": "c-1", "currency": '), {
      status: 400,
      type: 'urn:problem:malformed-json',
    });
    expect(problem.instance).toBe('/orders');
  });

  it('answers a JSON body sent as text/plain with 415', async () => {
    await expectRefused(() => postRaw(JSON.stringify(validOrder()), 'text/plain'), {
      status: 415,
      type: 'urn:problem:unsupported-media-type',
    });
  });

  it('answers a body over the size limit with 413', async () => {
    const huge = { ...validOrder(), customerId: 'x'.repeat(40 * 1024) };
    await expectRefused(() => postJson(huge), { status: 413, type: 'urn:problem:body-too-large' });
  });
});

describe('POST /orders validates the body and points at every offending field', () => {
  const item = { sku: 'KB-101', quantity: 1 };
  const { customerId: _c, ...withoutCustomerId } = validOrder();
  const { currency: _cur, ...withoutCurrency } = validOrder();
  const { items: _i, ...withoutItems } = validOrder();
  const cases: [name: string, body: unknown, pointers: string[]][] = [
    ['a missing customerId', withoutCustomerId, ['#/customerId']],
    ['a missing currency', withoutCurrency, ['#/currency']],
    ['missing items', withoutItems, ['#/items']],
    ['an empty object', {}, ['#/customerId', '#/currency', '#/items']],
    ['an array instead of an object', [validOrder()], ['#']],
    ['an unknown top-level field', { ...validOrder(), coupon: 'FREE' }, ['#/coupon']],
    ['two unknown fields', { ...validOrder(), coupon: 'FREE', note: 'hi' }, ['#/coupon', '#/note']],
    [
      'a client-supplied unitPrice (prices come from the catalog)',
      { ...validOrder(), items: [{ ...item, unitPrice: 1 }] },
      ['#/items/0/unitPrice'],
    ],
    [
      'a quantity given as a string',
      { ...validOrder(), items: [{ ...item, quantity: '2' }] },
      ['#/items/0/quantity'],
    ],
    ['a customerId given as a number', { ...validOrder(), customerId: 42 }, ['#/customerId']],
    ['a blank customerId', { ...validOrder(), customerId: '   ' }, ['#/customerId']],
    ['items that are not an array', { ...validOrder(), items: item }, ['#/items']],
    ['quantity 0', { ...validOrder(), items: [{ ...item, quantity: 0 }] }, ['#/items/0/quantity']],
    ['a negative quantity', { ...validOrder(), items: [{ ...item, quantity: -1 }] }, ['#/items/0/quantity']],
    [
      'a fractional quantity',
      { ...validOrder(), items: [{ ...item, quantity: 1.5 }] },
      ['#/items/0/quantity'],
    ],
    [
      `a quantity over ${MAX_QUANTITY}`,
      { ...validOrder(), items: [{ ...item, quantity: MAX_QUANTITY + 1 }] },
      ['#/items/0/quantity'],
    ],
    ['a lowercase currency', { ...validOrder(), currency: 'eur' }, ['#/currency']],
    ['a four-letter currency', { ...validOrder(), currency: 'EURO' }, ['#/currency']],
    ['no items', { ...validOrder(), items: [] }, ['#/items']],
    [
      `more than ${MAX_ITEMS} items`,
      {
        ...validOrder(),
        items: Array.from({ length: MAX_ITEMS + 1 }, (_, i) => ({ sku: `SKU-${i}`, quantity: 1 })),
      },
      ['#/items'],
    ],
    [
      'the same sku twice',
      {
        ...validOrder(),
        items: [item, { sku: 'MS-202', quantity: 1 }, { sku: 'KB-101', quantity: 2 }],
      },
      ['#/items/2/sku'],
    ],
    [
      'several problems at once',
      { customerId: '', currency: 'eur', items: [{ sku: 'KB-101', quantity: 0 }] },
      ['#/customerId', '#/currency', '#/items/0/quantity'],
    ],
  ];

  it.each(cases)('answers %s with 400', async (_name, body, pointers) => {
    await expectRefused(() => postJson(body), { status: 400, type: VALIDATION, pointers });
  });

  it('escapes the pointer of an unknown field as an RFC 6901 URI fragment', async () => {
    await expectRefused(() => postJson({ ...validOrder(), 'a/b': 1, 'c~d': 2, 'e f': 3 }), {
      status: 400,
      type: VALIDATION,
      pointers: ['#/a~1b', '#/c~0d', '#/e%20f'],
    });
  });

  it('refuses a NUL character, which PostgreSQL cannot store, with 400 rather than 500', async () => {
    await expectRefused(() => postJson({ ...validOrder(), customerId: 'c\u0000-1' }), {
      status: 400,
      type: VALIDATION,
      pointers: ['#/customerId'],
    });
    await expectRefused(() => postJson({ ...validOrder(), items: [{ sku: 'KB-\u0000101', quantity: 1 }] }), {
      status: 400,
      type: VALIDATION,
      pointers: ['#/items/0/sku'],
    });
  });
});

describe('POST /orders refuses items the catalog cannot sell', () => {
  it('answers an unknown sku with 422 pointing at that item', async () => {
    await expectRefused(
      () =>
        postJson({
          ...validOrder(),
          items: [
            { sku: 'KB-101', quantity: 1 },
            { sku: 'NOPE-999', quantity: 1 },
          ],
        }),
      { status: 422, type: UNORDERABLE, pointers: ['#/items/1/sku'] },
    );
  });

  it('answers a sku sold in another currency with 422', async () => {
    const problem = await expectRefused(() => postJson({ ...validOrder(), currency: 'USD' }), {
      status: 422,
      type: UNORDERABLE,
      pointers: ['#/items/0/sku'],
    });
    expect(problem.detail).toContain('EUR');
  });

  it(`accepts exactly ${MAX_ITEMS} items as far as validation goes (then 422 for the unknown skus)`, async () => {
    const items = Array.from({ length: MAX_ITEMS }, (_, i) => ({ sku: `SKU-${i}`, quantity: 1 }));
    await expectRefused(() => postJson({ ...validOrder(), items }), {
      status: 422,
      type: UNORDERABLE,
      pointers: items.map((_, i) => `#/items/${i}/sku`),
    });
  });
});

describe('GET /orders/:id and unknown routes', () => {
  it('answers an id that is not a UUID with 400', async () => {
    const problem = await expectRefused(() => fetch(`${baseUrl}/orders/not-a-uuid`), {
      status: 400,
      type: VALIDATION,
    });
    // A path parameter is not in the body, so the error names the parameter instead of pointing.
    expect(problem.errors).toEqual([{ parameter: 'id', detail: 'expected a UUID' }]);
  });

  it('answers an order that does not exist with 404', async () => {
    await expectRefused(() => fetch(`${baseUrl}/orders/${randomUUID()}`), { status: 404, type: NOT_FOUND });
  });

  it('answers an unknown route with a 404 problem', async () => {
    const problem = await expectRefused(() => fetch(`${baseUrl}/no-such-route`), {
      status: 404,
      type: NOT_FOUND,
    });
    expect(problem.instance).toBe('/no-such-route');
  });

  it('answers an unsupported method on /orders with a 404 problem', async () => {
    await expectRefused(() => fetch(`${baseUrl}/orders`, { method: 'DELETE' }), {
      status: 404,
      type: NOT_FOUND,
    });
  });
});

// --- the happy path and atomicity ----------------------------------------------------------------

describe('POST /orders with a valid order', () => {
  it('writes the order, its items and exactly one ORDER_CREATED event priced from the catalog', async () => {
    const before = await rowCounts();
    const response = await postJson({
      customerId: 'customer-happy',
      currency: 'EUR',
      items: [
        { sku: 'KB-101', quantity: 2 },
        { sku: 'CB-505', quantity: MAX_QUANTITY },
      ],
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const order = (await response.json()) as OrderResource;
    const expectedTotal = String(2 * 8900 + MAX_QUANTITY * 900);
    expect(order).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      customerId: 'customer-happy',
      currency: 'EUR',
      status: 'PENDING',
      // Neither inventory nor billing has answered yet.
      stockStatus: null,
      paymentStatus: null,
      totalCents: expectedTotal,
      createdAt: expect.any(String),
      items: expect.arrayContaining([
        { sku: 'KB-101', quantity: 2, unitPriceCents: '8900' },
        { sku: 'CB-505', quantity: MAX_QUANTITY, unitPriceCents: '900' },
      ]),
    });
    expect(order.items).toHaveLength(2);
    expect(response.headers.get('location')).toBe(`/orders/${order.id}`);

    expect(await rowCounts()).toEqual({
      orders: before.orders + 1,
      order_items: before.order_items + 2,
      outbox: before.outbox + 1,
    });

    const orderRows = await queryOnce(
      db.url,
      'select customer_id, currency, status, total_cents from orders where id = $1',
      [order.id],
    );
    expect(orderRows).toEqual([
      { customer_id: 'customer-happy', currency: 'EUR', status: 'PENDING', total_cents: expectedTotal },
    ]);
    const itemRows = await queryOnce(
      db.url,
      'select sku, quantity, unit_price_cents from order_items where order_id = $1 order by sku',
      [order.id],
    );
    expect(itemRows).toEqual([
      { sku: 'CB-505', quantity: MAX_QUANTITY, unit_price_cents: '900' },
      { sku: 'KB-101', quantity: 2, unit_price_cents: '8900' },
    ]);

    const events = await queryOnce<{
      source: string;
      aggregate_type: string;
      event_type: string;
      schema_version: number;
      status: string;
      attempts: number;
      payload: unknown;
    }>(
      db.url,
      `select source, aggregate_type, event_type, schema_version, status, attempts, payload
         from outbox where aggregate_id = $1`,
      [order.id],
    );
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({
      source: '/orders',
      aggregate_type: 'order',
      event_type: ORDER_CREATED,
      schema_version: 1,
      status: 'pending',
      attempts: 0,
    });
    const payload = orderCreatedV1.parse(event?.payload);
    expect(payload).toEqual({
      orderId: order.id,
      customerId: 'customer-happy',
      currency: 'EUR',
      totalCents: expectedTotal,
      items: expect.arrayContaining([
        { sku: 'KB-101', quantity: 2, unitPriceCents: '8900' },
        { sku: 'CB-505', quantity: MAX_QUANTITY, unitPriceCents: '900' },
      ]),
    });
    expect(payload.items).toHaveLength(2);

    const fetched = await fetch(`${baseUrl}${response.headers.get('location')}`);
    expect(fetched.status).toBe(200);
    // The single-order view adds the order's history (empty until inventory or billing reply).
    expect(await fetched.json()).toEqual({ ...order, history: [] });
  });

  it('writes neither the order nor its event when the outbox insert fails', async () => {
    const customerId = `customer-atomic-${randomUUID()}`;
    const body = { customerId, currency: 'EUR', items: [{ sku: 'MN-303', quantity: 1 }] };
    const ordersOf = () => queryOnce(db.url, 'select id from orders where customer_id = $1', [customerId]);

    // Only this test database: make every insert of an order event fail. NOT VALID keeps the
    // constraint off the rows earlier tests wrote; new inserts are still checked.
    await queryOnce(
      db.url,
      `alter table outbox add constraint test_reject check (aggregate_type <> 'order') not valid`,
    );
    try {
      await expectRefused(() => postJson(body), { status: 500, type: 'urn:problem:internal' });
      expect(await ordersOf()).toEqual([]);
    } finally {
      await queryOnce(db.url, 'alter table outbox drop constraint test_reject');
    }

    // The same request succeeds once the outbox accepts the event again: it was the event that failed.
    const retried = await postJson(body);
    expect(retried.status).toBe(201);
    expect(await ordersOf()).toHaveLength(1);
  });
});
