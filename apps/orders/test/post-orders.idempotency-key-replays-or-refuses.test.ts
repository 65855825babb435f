// Idempotency-Key on POST /orders: a client retrying a request gets the order it already created,
// never a second one, even when the retries race each other.
import { randomUUID } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type OrdersApi,
  postOrder,
  QUEUE_EVERY_REQUEST,
  rowsOfCustomer,
  startOrdersApi,
} from './support/ordersApi.ts';

useLeakGuard();

let api: OrdersApi;
beforeAll(async () => {
  // 20 requests race below: queued, not shed, since the point is that they are correct together.
  api = await startOrdersApi('orders_idem', { admission: QUEUE_EVERY_REQUEST });
});
afterAll(() => api?.close());

const order = (customerId: string, quantity = 1) => ({
  customerId,
  currency: 'EUR',
  items: [{ sku: 'HD-404', quantity }],
});

const countFor = (customerId: string) => rowsOfCustomer(api, customerId);

describe('POST /orders with an Idempotency-Key', () => {
  it('returns the same order for a repeated key and writes nothing new', async () => {
    const key = randomUUID();
    const first = await postOrder(api.baseUrl, order('idem-repeat'), { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const created = await first.json();

    const again = await postOrder(api.baseUrl, order('idem-repeat'), { 'Idempotency-Key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(await again.json()).toEqual(created);
    expect(await countFor('idem-repeat')).toEqual({ orders: 1, events: 1 });
  });

  it('refuses the same key with a different body with 422 and writes nothing', async () => {
    const key = randomUUID();
    expect((await postOrder(api.baseUrl, order('idem-reuse', 1), { 'Idempotency-Key': key })).status).toBe(
      201,
    );
    const reused = await postOrder(api.baseUrl, order('idem-reuse', 2), { 'Idempotency-Key': key });
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await reused.json()) as { type: string; errors: unknown[] };
    expect(problem.type).toBe('urn:problem:idempotency-key-reused');
    expect(problem.errors).toEqual([
      { header: 'Idempotency-Key', detail: 'already used with a different body' },
    ]);
    expect(await countFor('idem-reuse')).toEqual({ orders: 1, events: 1 });
  });

  it('creates exactly one order when 20 requests with the same key race', async () => {
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        postOrder(api.baseUrl, order('idem-race'), { 'Idempotency-Key': key }),
      ),
    );
    expect(responses.map((res) => res.status)).toEqual(Array(20).fill(201));
    const ids = new Set(
      await Promise.all(responses.map(async (res) => ((await res.json()) as { id: string }).id)),
    );
    expect(ids.size).toBe(1);
    expect(responses.filter((res) => res.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect(await countFor('idem-race')).toEqual({ orders: 1, events: 1 });
  });

  it('does not keep a key whose request failed, so a corrected retry can use it', async () => {
    const key = randomUUID();
    const bad = { customerId: 'idem-fail', currency: 'EUR', items: [{ sku: 'NOPE-1', quantity: 1 }] };
    expect((await postOrder(api.baseUrl, bad, { 'Idempotency-Key': key })).status).toBe(422);
    // The same key with the same (still bad) body fails the same way, instead of replaying nothing.
    expect((await postOrder(api.baseUrl, bad, { 'Idempotency-Key': key })).status).toBe(422);
    expect((await postOrder(api.baseUrl, order('idem-fail'), { 'Idempotency-Key': key })).status).toBe(201);
    expect(await countFor('idem-fail')).toEqual({ orders: 1, events: 1 });
  });

  it('refuses a malformed key with 400 naming the header', async () => {
    const res = await postOrder(api.baseUrl, order('idem-badkey'), { 'Idempotency-Key': 'has spaces in it' });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: { header: string }[] };
    expect(problem.errors[0]?.header).toBe('Idempotency-Key');
    expect(await countFor('idem-badkey')).toEqual({ orders: 0, events: 0 });
  });
});
