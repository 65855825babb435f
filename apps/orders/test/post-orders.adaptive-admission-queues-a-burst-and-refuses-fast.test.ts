// The orders API's default, adaptive admission limit against the fixed one it replaced, on the real
// API and database (src/http/admission.ts, src/config.ts). A burst of 40 orders arrives while a lock
// the test holds stalls the 20 admitted ones, as a pause (a checkpoint, a GC) stalls them: the fixed
// limit's 25 ms queue refuses the 20 beyond its slots; the adaptive queue takes them, since each
// should get a slot soon, and all 40 are created once the lock goes. Then a stall outlasts the queue's
// timeout: the requests that arrive after it are refused on arrival, within 50 ms of it by the API's
// own clock (http_admission_refusal_seconds), and write nothing.

import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { loadConfig } from '@outbox/runtime/config';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { admissionOptions, configSchema } from '../src/config.ts';
import { metric, type OrdersApi, postOrder, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

const env = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/orders', KAFKA_BROKERS: '127.0.0.1:9092' };
const admissionOf = (more: Record<string, string>) =>
  admissionOptions(loadConfig('orders', configSchema, { ...env, ...more }));

const order = (customerId: string) => ({
  customerId,
  currency: 'EUR',
  items: [{ sku: 'KB-101', quantity: 1 }],
});
const BURST = 40;
const SLOTS = 20; // the pool's 22 less the 2 kept: the default limit, and the adaptive one's ceiling

const apis: OrdersApi[] = [];
const lockers: pg.Client[] = [];
afterAll(async () => {
  for (const locker of lockers) await locker.end();
  for (const api of apis) await api.close();
});

async function start(label: string, admission: ReturnType<typeof admissionOf>): Promise<OrdersApi> {
  const api = await startOrdersApi(label, {
    admission,
    timeouts: {
      DATABASE_CONNECT_TIMEOUT_MS: 5_000,
      DATABASE_STATEMENT_TIMEOUT_MS: 30_000,
      DATABASE_TRANSACTION_TIMEOUT_MS: 60_000,
    },
  });
  apis.push(api);
  // Measured work first: the adaptive queue judges a wait by the recent time of the work.
  for (let i = 0; i < 20; i++) expect((await postOrder(api.baseUrl, order('warm-up'))).status).toBe(201);
  return api;
}

/** Hold `lock table orders` until `release` is called: every order insert waits on it. */
async function stall(api: OrdersApi) {
  const locker = new pg.Client({ connectionString: api.db.url });
  lockers.push(locker);
  await locker.connect();
  await locker.query('begin');
  await locker.query('lock table orders in exclusive mode');
  return { release: () => locker.query('rollback') };
}

/** The sum of the series of `name` on /metrics whose labels include `label`. */
/** Requests the admission limit has seen so far: in flight, queued, and refused. */
async function admitted(api: OrdersApi): Promise<number> {
  const [inFlight, queued, shed] = await Promise.all([
    metric(api, 'http_admission_requests', 'state="in_flight"'),
    metric(api, 'http_admission_requests', 'state="queued"'),
    metric(api, 'http_admission_shed_total'),
  ]);
  return inFlight + queued + shed;
}

const burstOf = (api: OrdersApi, n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) =>
    postOrder(api.baseUrl, order(`${prefix}-${i}`)).then((res) => res.status),
  );

async function createdBy(api: OrdersApi, prefix: string): Promise<number> {
  const [row] = await queryOnce<{ n: number }>(
    api.db.url,
    `select count(*)::int as n from orders where customer_id like $1`,
    [`${prefix}-%`],
  );
  return row?.n ?? 0;
}

describe('POST /orders under a burst, adaptive admission against the fixed limit', () => {
  it('the fixed limit refuses the burst beyond its slots while the adaptive queue takes it all', async () => {
    const fixed = await start('orders_burst_fixed', admissionOf({ ADMISSION_LIMITER: 'fixed' }));
    // The default but for the queue's timeout, at its most: the lock is released once the test saw
    // the whole burst arrive, which on a busy 2-core machine may take longer than 500 ms.
    const adaptive = await start(
      'orders_burst_adaptive',
      admissionOf({ ADMISSION_QUEUE_TIMEOUT_MS: '1000' }),
    );

    const fixedStall = await stall(fixed);
    const fixedAnswers = burstOf(fixed, BURST, 'burst');
    await eventually('the fixed limit answered the burst beyond its slots', async () =>
      (await metric(fixed, 'http_admission_shed_total')) >= BURST - SLOTS ? true : undefined,
    );
    await fixedStall.release();
    const fixedStatuses = await Promise.all(fixedAnswers);
    expect(fixedStatuses.filter((s) => s === 503)).toHaveLength(BURST - SLOTS);
    expect(await createdBy(fixed, 'burst')).toBe(SLOTS);

    const adaptiveStall = await stall(adaptive);
    const adaptiveAnswers = burstOf(adaptive, BURST, 'burst');
    await eventually('the whole burst reached the adaptive limit', async () =>
      (await admitted(adaptive)) === BURST ? true : undefined,
    );
    expect(await metric(adaptive, 'http_admission_shed_total')).toBe(0);
    expect(await metric(adaptive, 'http_admission_requests', 'state="queued"')).toBe(BURST - SLOTS);
    await adaptiveStall.release();
    expect(await Promise.all(adaptiveAnswers)).toEqual(Array(BURST).fill(201));
    expect(await createdBy(adaptive, 'burst')).toBe(BURST);
    expect(await metric(adaptive, 'http_admission_shed_total')).toBe(0);
  }, 120_000);

  it('the adaptive limit refuses on arrival, within 50 ms by the API clock, once its queue cannot be served in time', async () => {
    const adaptive = apis[1] as OrdersApi;
    const held = await stall(adaptive);
    const stuck = burstOf(adaptive, 100, 'stuck');
    await eventually('the stuck requests reached the limit and the queued ones timed out', async () => {
      const queued = await metric(adaptive, 'http_admission_requests', 'state="queued"');
      return (await admitted(adaptive)) >= 100 && queued === 0 ? true : undefined;
    });
    // Nothing has come free for as long as a queued request may wait: whoever comes now would
    // only be refused later, so is refused on arrival.
    const fastBefore = await metric(adaptive, 'http_admission_refusal_seconds_bucket', 'le="0.05"');
    const onArrivalBefore = await metric(adaptive, 'http_admission_shed_total', 'reason="expected_wait"');
    const late = await Promise.all(burstOf(adaptive, 50, 'late'));
    expect(late).toEqual(Array(50).fill(503));
    expect(
      (await metric(adaptive, 'http_admission_shed_total', 'reason="expected_wait"')) - onArrivalBefore,
    ).toBe(50);
    expect((await metric(adaptive, 'http_admission_refusal_seconds_bucket', 'le="0.05"')) - fastBefore).toBe(
      50,
    );
    await held.release();
    const statuses = await Promise.all(stuck);
    expect(statuses.filter((s) => s !== 503 && s !== 201)).toEqual([]);
    expect(await createdBy(adaptive, 'stuck')).toBe(statuses.filter((s) => s === 201).length);
    expect(await createdBy(adaptive, 'late')).toBe(0);
  }, 120_000);
});
