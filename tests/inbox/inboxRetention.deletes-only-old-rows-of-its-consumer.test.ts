import { applyOnce } from '@outbox/devstack/testing/apply-once';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { deleteProcessed, startInboxRetention } from '@outbox/inbox';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DAY_MS = 86_400_000;
let database: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  database = await createOutboxDatabase('inbox_retention');
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // An idle client whose backend another file's test terminates (57P01) must not be an unhandled
  // error of the whole run; a query in flight would still fail its test.
  pool.on('error', () => {});
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

/** Rows of `consumer`, one per age in days, each with a fresh event id. */
async function seed(consumer: string, agesInDays: number[]): Promise<string[]> {
  const { rows } = await pool.query<{ event_id: string }>(
    `insert into processed_events (consumer, event_id, event_type, processed_at)
     select $1, gen_random_uuid(), 'ORDER_CREATED', now() - make_interval(days => age)
       from unnest($2::int[]) as age
     returning event_id`,
    [consumer, agesInDays],
  );
  return rows.map((row) => row.event_id);
}

const count = async (consumer: string) =>
  Number(
    (await pool.query('select count(*) from processed_events where consumer = $1', [consumer])).rows[0].count,
  );

const transaction = async <T>(work: (tx: pg.PoolClient) => Promise<T>): Promise<T> => {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback');
    throw err;
  } finally {
    client.release();
  }
};

describe('processed_events retention', () => {
  it('deletes only the rows of its consumer older than the window, in bounded batches', async () => {
    await seed('inventory', [20, 16, 15, 1, 0]);
    await seed('billing', [30, 20]);
    expect(await deleteProcessed(pool, 'inventory', 14 * DAY_MS, 2)).toBe(2);
    expect(await deleteProcessed(pool, 'inventory', 14 * DAY_MS, 2)).toBe(1);
    expect(await deleteProcessed(pool, 'inventory', 14 * DAY_MS, 2)).toBe(0);
    expect(await count('inventory')).toBe(2);
    expect(await count('billing')).toBe(2);
  });

  it('keeps a recent event a duplicate: its redelivery still applies nothing', async () => {
    const [recent] = await seed('orders', [1]);
    const [old] = await seed('orders', [30]);
    await deleteProcessed(pool, 'orders', 14 * DAY_MS, 100);
    let effects = 0;
    const effect = async () => {
      effects += 1;
    };
    const replay = (id: string | undefined) =>
      applyOnce(transaction, 'orders', { id: id ?? '', type: 'ORDER_CREATED' }, effect);
    expect(await replay(recent)).toBe('duplicate');
    // Past the window nothing remembers the event: only safe because it can no longer come back.
    expect(await replay(old)).toBe('applied');
    expect(effects).toBe(1);
  });

  it('sweeps on a timer until nothing past the window is left', async () => {
    await seed(
      'sweeper',
      Array.from({ length: 2_500 }, () => 30),
    );
    await seed('sweeper', [0]);
    const retention = startInboxRetention({
      consumer: 'sweeper',
      retentionHours: 14 * 24,
      transaction,
      logger: pino({ level: 'silent' }),
      intervalMs: 50,
    });
    try {
      await expect.poll(() => count('sweeper'), { timeout: 10_000 }).toBe(1);
    } finally {
      retention.stop();
    }
  });
});
