// RELAY_RETENTION_HOURS takes any non-negative number: 2.2 hours is 7,920,000.000000001 ms in
// floating point, which the sweep must still turn into a retention (and not a failed bigint cast
// at every sweep).
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { deletePublished } from '@outbox/outbox';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';

useLeakGuard();

let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createOutboxDatabase('retention_fractional_hours');
  pool = new pg.Pool({ connectionString: db.url, max: 1 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

it('deletes what a retention of 2.2 hours lets go, and keeps the rest', async () => {
  await insertEvents(db.url, { count: 3, aggregates: 3 });
  const { rows } = await pool.query<{ id: string }>('select id from outbox order by seq');
  const [old, recent, pending] = rows.map((row) => row.id);
  await pool.query(
    `update outbox set status = 'published', published_at = now() - $2::interval where id = $1`,
    [old, '3 hours'],
  );
  await pool.query(
    `update outbox set status = 'published', published_at = now() - $2::interval where id = $1`,
    [recent, '2 hours'],
  );

  expect(await deletePublished(pool, 2.2 * 3_600_000, 100)).toBe(1);
  const left = await pool.query<{ id: string }>('select id from outbox order by seq');
  expect(left.rows.map((row) => row.id)).toEqual([recent, pending]);
});
