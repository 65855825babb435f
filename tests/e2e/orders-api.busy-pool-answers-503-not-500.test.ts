// When every connection of the orders API's pool is busy for longer than Prisma's maxWait
// (DATABASE_CONNECT_TIMEOUT_MS, set to 2 s here),
// a POST /orders cannot start its transaction. Nothing was written, so the client may retry, and
// the API says so: 503 + Retry-After. (Found by consumers.never-oversell-under-concurrency: Prisma
// 7 with the pg driver adapter reports this as P2028, not P2024, and the API used to answer 500.)
//
// Reproduced deterministically: a lock held by the test keeps the first 10 requests (the pool's
// size) inside their transactions for 3 s; the ones behind them wait for a connection.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@outbox/devstack/ports';
import { type ServiceProcess, startService } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

const POOL_SIZE = 10; // node-postgres' default, which the orders API's PrismaPg adapter uses
const REQUESTS = POOL_SIZE + 5;

let db: TestDatabase;
let orders: ServiceProcess | undefined;
beforeAll(async () => {
  db = await createTestDatabase('busypool_orders');
  const prefix = `busypool-${randomBytes(3).toString('hex')}.`;
  orders = await startService(
    'orders',
    {
      DATABASE_URL: db.url,
      KAFKA_BROKERS: sharedKafkaBrokers().join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      KAFKA_GROUP_ID: `${prefix}orders`,
      // How long a request waits for a pooled connection: shorter than the lock below is held.
      DATABASE_CONNECT_TIMEOUT_MS: '2000',
    },
    { port: await freePort(), label: 'busypool', name: 'orders' },
  );
});
afterAll(async () => {
  await orders?.stop();
  await db?.drop();
});

describe('orders API with every pooled connection busy', () => {
  it('answers the requests that cannot get a connection with 503 + Retry-After, not 500', async () => {
    const url = orders?.url ?? '';
    // Hold a lock every order insert waits for.
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    let responses: { status: number; retryAfter: string | null; type: string | undefined }[];
    try {
      await locker.query('begin');
      await locker.query('lock table orders in exclusive mode');
      const pending = Array.from({ length: REQUESTS }, async (_, i) => {
        const res = await fetch(`${url}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            customerId: `busy-${i}`,
            currency: 'EUR',
            items: [{ sku: 'KB-101', quantity: 1 }],
          }),
        });
        const body = (await res.json()) as { type?: string };
        return { status: res.status, retryAfter: res.headers.get('retry-after'), type: body.type };
      });
      // Past Prisma's 2 s maxWait for the queued ones, within the 5 s timeout of the running ones.
      await sleep(3000);
      await locker.query('rollback');
      responses = await Promise.all(pending);
    } finally {
      await locker.end();
    }

    const created = responses.filter((r) => r.status === 201);
    const refused = responses.filter((r) => r.status !== 201);
    // The requests that held a connection went through once the lock was gone...
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    // ...and nothing was written for the others, which may simply retry: say so.
    const [count] = await queryOnce<{ count: string }>(db.url, 'select count(*) from orders');
    expect(Number(count?.count)).toBe(created.length);
    expect(refused).toEqual(
      refused.map(() => ({ status: 503, retryAfter: '5', type: 'urn:problem:database-unavailable' })),
    );
  }, 60_000);
});
