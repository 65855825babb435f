// Past capacity most requests the orders API answers are refusals (503 overloaded), and a span each
// would take CPU from the orders being served (docs/tracing.md, "What is traced, what was cut"). An
// order refused on arrival starts no span; the admitted one is traced as always.
//
// Deterministic: the orders API admits one request at a time with no queue, a lock held by the test
// keeps the admitted order inside its transaction, and every order sent meanwhile is refused on
// arrival. Every request would be traced otherwise: the rate limit is far above the few sent.
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { type OtlpReceiver, startOtlpReceiver } from '@outbox/devstack/testing/otlp-receiver';
import { eventually, startOrdersAlone } from '@outbox/devstack/testing/stack';
import { createTestDatabase, type TestDatabase } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

const REFUSED = 5;

let db: TestDatabase;
let receiver: OtlpReceiver;
let orders: ServiceProcess | undefined;
beforeAll(async () => {
  db = await createTestDatabase('untraced_refusals');
  receiver = await startOtlpReceiver();
  orders = await startOrdersAlone('untraced', db.url, {
    ADMISSION_LIMITER: 'fixed',
    ADMISSION_LIMIT: '1',
    ADMISSION_QUEUE_LENGTH: '0',
    TRACING_MAX_TRACES_PER_SECOND: '1000',
    ...receiver.tracingEnv('orders'),
  });
});
afterAll(async () => {
  await orders?.stop();
  await receiver?.close();
  await db?.drop();
});

const placeOrder = (n: number) =>
  fetch(`${orders?.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      customerId: `untraced-${n}`,
      currency: 'EUR',
      items: [{ sku: 'KB-101', quantity: 1 }],
    }),
  });

const serverSpans = () =>
  receiver.spans.filter((span) => span.service === 'orders' && span.kind === 'server');

describe('the orders API under overload, traced', () => {
  it('starts no span for an order refused on arrival, and traces the admitted one', async () => {
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    let admitted: Promise<Response>;
    const refusals: number[] = [];
    try {
      await locker.query('begin');
      await locker.query('lock table orders in exclusive mode');
      admitted = placeOrder(0);
      // The one slot is taken once the admitted order waits on the lock.
      await eventually('the admitted order waits on the lock', async () => {
        const { rows } = await locker.query<{ n: number }>(
          `select count(*)::int as n from pg_locks where relation = 'orders'::regclass and not granted`,
        );
        return rows[0]?.n ? true : undefined;
      });
      for (let n = 1; n <= REFUSED; n++) {
        const res = await placeOrder(n);
        refusals.push(res.status);
        await res.arrayBuffer();
      }
    } finally {
      await locker.query('rollback').catch(() => undefined);
      await locker.end();
    }
    expect(refusals).toEqual(Array(REFUSED).fill(503));
    expect((await admitted).status).toBe(201);

    // Spans are exported in the order they end: the refusals' would arrive no later than the
    // admitted order's.
    const spans = await eventually('the admitted order’s span is exported', async () => {
      const found = serverSpans();
      return found.some((span) => span.attributes['http.response.status_code'] === '201') ? found : undefined;
    });
    expect(spans.map((span) => [span.name, span.attributes['http.response.status_code']])).toEqual([
      ['POST /orders', '201'],
    ]);
  });
});
