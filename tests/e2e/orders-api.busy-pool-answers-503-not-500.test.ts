// When every admission slot of the orders API is taken by a request stuck in its transaction, the
// requests beyond them are refused at once: 503 urn:problem:overloaded + Retry-After, nothing
// written, the client may retry. Before the admission limit (issue #25) they queued on the
// connection pool for Prisma's maxWait and were then answered 503 "database unavailable" (and,
// earlier still, 500: Prisma 7 reports the pool's timeout as P2028, found by
// consumers.never-oversell-under-concurrency), while the database was fine.
//
// Reproduced deterministically: a lock held by the test keeps the first requests (as many as the
// admission limit) inside their transactions; the others are answered while it is still held.
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually, startOrdersAlone } from '@outbox/devstack/testing/stack';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

const POOL_SIZE = 22; // DATABASE_POOL_SIZE's default
const ADMITTED = POOL_SIZE - 2; // ADMISSION_LIMIT's default: the pool less 2 kept for /healthz and background work
const REQUESTS = POOL_SIZE + 5;

let db: TestDatabase;
let orders: ServiceProcess | undefined;
beforeAll(async () => {
  db = await createTestDatabase('busypool_orders');
  orders = await startOrdersAlone('busypool', db.url);
});
afterAll(async () => {
  await orders?.stop();
  await db?.drop();
});

describe('orders API with every admission slot busy', () => {
  it('answers the requests beyond the limit at once with 503 overloaded + Retry-After, not 500', async () => {
    const url = orders?.url ?? '';
    // Hold a lock every order insert waits for.
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    type Answer = { status: number; retryAfter: string | null; type: string | undefined };
    const answered: Answer[] = [];
    let responses: Answer[];
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
        const answer = { status: res.status, retryAfter: res.headers.get('retry-after'), type: body.type };
        answered.push(answer);
        return answer;
      });
      // The ones beyond the limit are answered while the admitted ones still wait on the lock.
      await eventually('the requests beyond the admission limit are answered', async () =>
        answered.length >= REQUESTS - ADMITTED ? true : undefined,
      );
      expect(answered.filter((r) => r.status === 201)).toEqual([]);
      await locker.query('rollback');
      responses = await Promise.all(pending);
    } finally {
      await locker.end();
    }

    const created = responses.filter((r) => r.status === 201);
    const refused = responses.filter((r) => r.status !== 201);
    // The admitted requests went through once the lock was gone...
    expect(created).toHaveLength(ADMITTED);
    expect(refused).toHaveLength(REQUESTS - ADMITTED);
    // ...and nothing was written for the others, which may simply retry: say so.
    const [count] = await queryOnce<{ count: string }>(db.url, 'select count(*) from orders');
    expect(Number(count?.count)).toBe(created.length);
    expect(refused).toEqual(
      refused.map(() => ({ status: 503, retryAfter: '1', type: 'urn:problem:overloaded' })),
    );
  }, 60_000);
});
