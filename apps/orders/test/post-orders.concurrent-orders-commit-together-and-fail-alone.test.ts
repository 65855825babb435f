// Group commit: orders that wait for a transaction slot are written together, in ONE transaction,
// each with its own event; an order that fails inside such a batch fails alone. The batches are
// made deterministic with a real lock: a session holds the orders table, so the first order's
// transaction waits on it while the others queue in the API; releasing it lets one slot write the
// queue in batches. The API's own gauge says when every request is waiting. A statement-level
// trigger records which orders each INSERT wrote, so a batch's one statement is seen as such.
import { randomBytes, randomUUID } from 'node:crypto';
import { context, propagation, ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrderBatches } from '../src/orders/orderBatches.ts';
import { metric, type OrdersApi, postOrder, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

const MAX_BATCH = 8;

let api: OrdersApi;
beforeAll(async () => {
  api = await startOrdersApi('orders_batches', {
    // Every request admitted at once, so all of them reach the batches' queue.
    admission: { limit: 64, queueLength: 1_000, queueTimeoutMs: 60_000, retryAfterSeconds: 1 },
    orderBatches: { maxBatch: MAX_BATCH, concurrency: 1 },
  });
  // A poisoned order: its insert fails inside the database, as a broken row would.
  await queryOnce(
    api.db.url,
    `create function reject_poison() returns trigger language plpgsql as $$
     begin
       if new.customer_id = 'poison' then raise exception 'poisoned order'; end if;
       return new;
     end $$;
     create trigger reject_poison before insert on orders for each row execute function reject_poison();
     create table order_statements (customers text[] not null);
     create function record_order_statement() returns trigger language plpgsql as $$
     begin
       insert into order_statements select array_agg(customer_id) from inserted having count(*) > 0;
       return null;
     end $$;
     create trigger record_order_statement after insert on orders referencing new table as inserted
       for each statement execute function record_order_statement();
     insert into products (sku, name, currency, unit_price_cents) values ('BATCH-PRICE', 'Repriced', 'EUR', 1000)`,
  );
});
afterAll(() => api?.close());

const order = (customerId: string) => ({
  customerId,
  currency: 'EUR',
  items: [{ sku: 'MS-202', quantity: 1 }],
});

/**
 * Send `requests` (each a body, with its headers) while a session locks the orders table, wait
 * until all of them are in the API, release the lock; the responses, in order.
 */
async function sendQueued(
  requests: { body: unknown; headers?: Record<string, string> }[],
  beforeRelease?: (lock: pg.Client) => Promise<unknown>,
) {
  const lock = new pg.Client({ connectionString: api.db.url });
  await lock.connect();
  try {
    await lock.query('begin');
    await lock.query('lock table orders in share row exclusive mode');
    const responses: Promise<Response>[] = [];
    for (const [i, { body, headers }] of requests.entries()) {
      responses.push(postOrder(api.baseUrl, body, headers));
      // One at a time, so the queue's order is the order sent in.
      await eventually(`${i + 1} requests in the API`, async () =>
        (await metric(api, 'http_admission_requests', 'state="in_flight"')) > i ? true : undefined,
      );
    }
    await beforeRelease?.(lock);
    await lock.query('commit');
    return await Promise.all(responses);
  } finally {
    await lock.end();
  }
}

/** How many of `customers`' orders each INSERT statement into orders wrote, ascending. */
const ordersPerStatement = async (customers: string[]) =>
  (
    await queryOnce<{ n: number }>(
      api.db.url,
      'select cardinality(customers) as n from order_statements where customers && $1::text[]',
      [customers],
    )
  )
    .map((row) => row.n)
    .sort((a, b) => a - b);

type Written = { customer_id: string; order_tx: string; event_tx: string | null };

const written = (customers: string[]) =>
  queryOnce<Written>(
    api.db.url,
    `select o.customer_id, o.xmin::text as order_tx, e.xmin::text as event_tx
       from orders o left join outbox e on e.aggregate_id = o.id::text
      where o.customer_id = any($1)`,
    [customers],
  );

describe('POST /orders, many at once', () => {
  it('writes waiting orders together, each with its own event in its own order’s transaction', async () => {
    const customers = Array.from({ length: 1 + 2 * MAX_BATCH }, (_, i) => `together-${i}`);
    const responses = await sendQueued(customers.map((customer) => ({ body: order(customer) })));
    expect(responses.map((res) => res.status)).toEqual(customers.map(() => 201));

    const rows = await written(customers);
    expect(rows.map((row) => row.customer_id).sort()).toEqual([...customers].sort());
    // Every order has its event, written by the same transaction.
    expect(rows.filter((row) => row.event_tx !== row.order_tx)).toEqual([]);
    // The first alone (it took the free slot), then the queue in two full batches.
    const perTransaction = new Map<string, number>();
    for (const row of rows) perTransaction.set(row.order_tx, (perTransaction.get(row.order_tx) ?? 0) + 1);
    expect([...perTransaction.values()].sort((a, b) => a - b)).toEqual([1, MAX_BATCH, MAX_BATCH]);
    // And each batch by one statement.
    expect(await ordersPerStatement(customers)).toEqual([1, MAX_BATCH, MAX_BATCH]);
  });

  it('answers each order of a batch as it would alone: an unknown sku, a price changed since it was read', async () => {
    const repriced = (customerId: string) => ({
      customerId,
      currency: 'EUR',
      items: [{ sku: 'BATCH-PRICE', quantity: 2 }],
    });
    // The API now remembers BATCH-PRICE at 1000 cents.
    expect((await postOrder(api.baseUrl, repriced('price-read'))).status).toBe(201);
    const responses = await sendQueued(
      [
        { body: order('mixed-first') },
        { body: order('mixed-0') },
        {
          body: {
            customerId: 'mixed-unknown',
            currency: 'EUR',
            items: [{ sku: 'NO-SUCH-SKU', quantity: 1 }],
          },
        },
        { body: repriced('mixed-repriced') },
        { body: order('mixed-1') },
      ],
      // Committed with the lock's release, before the batch's statement runs.
      (lock) => lock.query(`update products set unit_price_cents = 1250 where sku = 'BATCH-PRICE'`),
    );
    expect(responses.map((res) => res.status)).toEqual([201, 201, 422, 201, 201]);
    const unknown = (await responses[2]?.json()) as { errors: unknown };
    expect(unknown.errors).toEqual([{ pointer: '#/items/0/sku', detail: 'unknown sku NO-SUCH-SKU' }]);
    const placed = (await responses[3]?.json()) as {
      id: string;
      totalCents: string;
      items: { unitPriceCents: string }[];
    };
    expect([placed.totalCents, placed.items[0]?.unitPriceCents]).toEqual(['2500', '1250']);
    const [event] = await queryOnce<{ payload: { totalCents: string } }>(
      api.db.url,
      'select payload from outbox where aggregate_id = $1',
      [placed.id],
    );
    expect(event?.payload.totalCents).toBe('2500');

    const customers = ['mixed-first', 'mixed-0', 'mixed-unknown', 'mixed-repriced', 'mixed-1'];
    const rows = await written(customers);
    expect(rows.map((row) => row.customer_id).sort()).toEqual(
      ['mixed-0', 'mixed-1', 'mixed-first', 'mixed-repriced'].sort(),
    );
    expect(rows.filter((row) => row.event_tx !== row.order_tx)).toEqual([]);
    // The two orders the batch's statement could write, by it; the repriced one after, alone.
    expect(await ordersPerStatement(customers)).toEqual([1, 1, 2]);
  });

  it('fails only the order that fails: the rest of its batch is written, each alone', async () => {
    const customers = Array.from({ length: MAX_BATCH }, (_, i) => `beside-poison-${i}`);
    const responses = await sendQueued([
      ...customers.map((customer) => ({ body: order(customer) })),
      { body: order('poison') },
    ]);
    expect(responses.slice(0, -1).map((res) => res.status)).toEqual(customers.map(() => 201));
    expect(responses.at(-1)?.status).toBe(500);

    const rows = await written([...customers, 'poison']);
    expect(rows.map((row) => row.customer_id).sort()).toEqual([...customers].sort());
    expect(rows.filter((row) => row.event_tx !== row.order_tx)).toEqual([]);
  });

  it('answers a key sent twice in one batch with one order, the second as its replay', async () => {
    const key = randomUUID();
    const body = order('same-key');
    const [first, filler, second] = await sendQueued([
      { body: order('before-the-key') },
      { body, headers: { 'Idempotency-Key': key } },
      { body, headers: { 'Idempotency-Key': key } },
    ]).then((responses) => [responses[1], responses[0], responses[2]]);
    expect([first?.status, filler?.status, second?.status]).toEqual([201, 201, 201]);
    expect(second?.headers.get('idempotent-replayed')).toBe('true');
    const [a, b] = await Promise.all([first?.json(), second?.json()]);
    expect(b).toEqual(a);
    expect(await written(['same-key'])).toHaveLength(1);
  });

  it('keeps each order’s own trace with its event, whichever request’s transaction writes it', async () => {
    // What a traced service registers; the requests' contexts are made here, one trace each.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    try {
      const batches = new OrderBatches(api.prisma, { maxBatch: MAX_BATCH, concurrency: 1 });
      const traceIds = Array.from({ length: 4 }, () => randomBytes(16).toString('hex'));
      const customers = traceIds.map((_, i) => `traced-${i}`);
      // The first is written at once, alone; the three after it wait for its slot, and one
      // transaction writes them, started in none of their requests' contexts.
      const placed = await Promise.all(
        traceIds.map((traceId, i) => {
          const span = { traceId, spanId: randomBytes(8).toString('hex'), traceFlags: TraceFlags.SAMPLED };
          return context.with(trace.setSpanContext(ROOT_CONTEXT, span), () =>
            batches.place(order(customers[i] as string)),
          );
        }),
      );
      expect(placed.map((result) => result.kind)).toEqual(customers.map(() => 'created'));
      const rows = await queryOnce<{ customer_id: string; traceparent: string; tx: string }>(
        api.db.url,
        `select o.customer_id, e.headers->>'traceparent' as traceparent, o.xmin::text as tx
           from orders o join outbox e on e.aggregate_id = o.id::text
          where o.customer_id = any($1)`,
        [customers],
      );
      const byCustomer = new Map(rows.map((row) => [row.customer_id, row]));
      expect(customers.map((customer) => byCustomer.get(customer)?.traceparent.split('-')[1])).toEqual(
        traceIds,
      );
      expect(new Set(customers.slice(1).map((customer) => byCustomer.get(customer)?.tx)).size).toBe(1);
    } finally {
      context.disable();
      propagation.disable();
    }
  });
});
