// Upgrading a live outbox (docs/production.md, "Upgrading a live outbox"): migration 004's index
// can be built beforehand with `create index concurrently`, which blocks no writer, and 004 then
// finds it instead of failing on it (or, as shipped before, building it again under a lock that
// stops every insert into the outbox for the whole build).

import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { sharedMigrations } from '@outbox/inbox';
import { migrateDatabase } from '@outbox/runtime/migrate';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('outbox_upgrade_live');
  // A database as it was before 004: the shared set's first three files.
  await runner({
    databaseUrl: db.url,
    dir: sharedMigrations.dir.map((folder) => `${folder}/*.sql`),
    useGlob: true,
    migrationsTable: sharedMigrations.table,
    direction: 'up',
    count: 3,
    checkOrder: true,
    log: () => {},
  });
});

afterAll(async () => {
  await db?.drop();
});

describe('the shared migrations on an outbox whose 004 index was built beforehand', () => {
  it('apply 004 and 005 over it, and leave the one index', async () => {
    await queryOnce(
      db.url,
      'create index concurrently outbox_aggregate_id_idx on outbox (aggregate_id, seq)',
    );
    const applied = await migrateDatabase(db.url, [sharedMigrations]);
    expect(applied).toEqual(['004_outbox_aggregate_reads', '005_outbox_cdc_columns']);
    const indexes = await queryOnce<{ indexdef: string }>(
      db.url,
      `select indexdef from pg_indexes where tablename = 'outbox' and indexdef like '%(aggregate_id, seq)'`,
    );
    expect(indexes.map((index) => index.indexdef)).toEqual([
      'CREATE INDEX outbox_aggregate_id_idx ON public.outbox USING btree (aggregate_id, seq)',
    ]);
  });
});
