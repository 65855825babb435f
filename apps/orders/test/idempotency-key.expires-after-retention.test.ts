// idempotency_keys does not grow for ever: keys older than the retention window are deleted by the
// orders process, newer ones are kept and still answer a retry with the order they created.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deleteExpiredIdempotencyKeys,
  startIdempotencyKeyRetention,
} from '../src/orders/idempotencyRetention.ts';
import { type OrdersApi, postOrder, startOrdersApi } from './support/ordersApi.ts';

useLeakGuard();

let api: OrdersApi;
beforeAll(async () => {
  api = await startOrdersApi('orders_idem_retention');
});
afterAll(() => api?.close());

const order = { customerId: 'retention', currency: 'EUR', items: [{ sku: 'CB-505', quantity: 1 }] };

/** Place an order under a new key and backdate the key by `ageHours`. */
async function keyAged(ageHours: number): Promise<{ key: string; orderId: string }> {
  const key = randomUUID();
  const res = await postOrder(api.baseUrl, order, { 'Idempotency-Key': key });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  await queryOnce(
    api.db.url,
    `update idempotency_keys set created_at = now() - $2::float8 * interval '1 hour' where key = $1`,
    [key, ageHours],
  );
  return { key, orderId: id };
}

const keysLeft = async (keys: string[]) =>
  (
    await queryOnce<{ key: string }>(api.db.url, 'select key from idempotency_keys where key = any($1)', [
      keys,
    ])
  ).map((row) => row.key);

async function eventually(check: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await sleep(50);
  }
}

describe('idempotency key retention', () => {
  it('deletes the keys older than the window and keeps the newer ones', async () => {
    const old = await keyAged(25);
    const older = await keyAged(24 * 30);
    const fresh = await keyAged(23);
    const deleted = await deleteExpiredIdempotencyKeys(api.prisma, 24);
    expect(deleted).toBe(2);
    expect(await keysLeft([old.key, older.key, fresh.key])).toEqual([fresh.key]);

    // The kept key still replays its order; the order of an expired key is still there (only its key went).
    const replay = await postOrder(api.baseUrl, order, { 'Idempotency-Key': fresh.key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(((await replay.json()) as { id: string }).id).toBe(fresh.orderId);
    expect(await queryOnce(api.db.url, 'select 1 from orders where id = $1', [old.orderId])).toHaveLength(1);
  });

  it('deletes more keys than one batch holds', async () => {
    await queryOnce(
      api.db.url,
      `insert into idempotency_keys (key, request_hash, order_id, created_at)
       select 'bulk-' || n, 'h', (select id from orders limit 1), now() - interval '2 days'
       from generate_series(1, 2500) as n`,
    );
    expect(await deleteExpiredIdempotencyKeys(api.prisma, 24)).toBe(2500);
  });

  it('runs in the background of the orders process, every interval', async () => {
    const retention = startIdempotencyKeyRetention({
      prisma: api.prisma,
      logger: pino({ level: 'silent' }),
      retentionHours: 1,
      intervalMs: 100,
    });
    try {
      // Aged after the first tick: only a later tick can delete it.
      await sleep(150);
      const expired = await keyAged(2);
      const kept = await keyAged(0.5);
      await eventually(async () => (await keysLeft([expired.key])).length === 0);
      expect(await keysLeft([kept.key])).toEqual([kept.key]);
    } finally {
      await retention.stop();
    }
  });

  it('keeps every key when the window is 0', async () => {
    const old = await keyAged(24 * 365);
    const retention = startIdempotencyKeyRetention({
      prisma: api.prisma,
      logger: pino({ level: 'silent' }),
      retentionHours: 0,
      intervalMs: 10,
    });
    await sleep(100);
    await retention.stop();
    expect(await keysLeft([old.key])).toEqual([old.key]);
  });
});
