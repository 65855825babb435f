// Group commit: orders that wait for a transaction slot are written together, in ONE transaction,
// each with its own event; an order that fails inside such a batch fails alone. The batches are
// made deterministic with a real lock: a session holds the orders table, so the first order's
// transaction waits on it while the others queue in the API; releasing it lets one slot write the
// queue in batches. The API's own gauge says when every request is waiting.
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
     create trigger reject_poison before insert on orders for each row execute function reject_poison()`,
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
async function sendQueued(requests: { body: unknown; headers?: Record<string, string> }[]) {
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
    await lock.query('commit');
    return await Promise.all(responses);
  } finally {
    await lock.end();
  }
}

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
