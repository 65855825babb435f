import { fileURLToPath } from 'node:url';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { findSchemaDrift } from '@outbox/schema-drift';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db.ts';

useLeakGuard();

const schemaPath = fileURLToPath(new URL('../prisma/schema.prisma', import.meta.url));
// Tables every service database has that are not modelled in Prisma on purpose: the shared
// outbox/inbox (raw SQL in packages/outbox and packages/inbox) and the two migration history tables.
const ignoreTables = ['outbox', 'processed_events', 'shared_migrations', 'service_migrations'];

/**
 * schema.prisma is not what creates the tables (the SQL migrations are, see docs/migrations.md), so
 * nothing else would notice if the two disagreed until a query failed in production.
 */
describe('orders schema.prisma matches the migrated database', () => {
  let db: TestDatabase;
  const drift = () => findSchemaDrift({ schemaPath, databaseUrl: db.url, ignoreTables });

  beforeAll(async () => {
    db = await createTestDatabase('orders_schema_drift');
    await migrate(db.url);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('has no drift', async () => {
    expect(await drift()).toEqual([]);
  });

  // The check itself can fail: each change below is made to the migrated database, must be reported
  // (and only it), and is then undone so the next one starts from a database in step again.
  it.each([
    {
      change: 'a column type',
      apply: 'alter table orders alter column total_cents type integer',
      undo: 'alter table orders alter column total_cents type bigint',
      expected: /^orders\.total_cents: schema\.prisma says bigint NOT NULL, database has integer NOT NULL$/,
    },
    {
      change: 'a column Prisma does not know',
      apply: 'alter table order_items add column discount_cents integer not null default 0',
      undo: 'alter table order_items drop column discount_cents',
      expected:
        /^order_items\.discount_cents: schema\.prisma has no field for it, database has integer NOT NULL default 0$/,
    },
    {
      change: 'a missing foreign key',
      apply: 'alter table order_items drop constraint order_items_order_id_fkey',
      undo: 'alter table order_items add constraint order_items_order_id_fkey foreign key (order_id) references orders (id)',
      expected:
        /^order_items\.order_id: schema\.prisma says foreign key \(order_id\) references orders \(id\) .*database has no such foreign key$/,
    },
    {
      change: 'a missing default',
      apply: 'alter table orders alter column created_at drop default',
      undo: 'alter table orders alter column created_at set default now()',
      expected: /^orders\.created_at: schema\.prisma says default now\(\), database has no default$/,
    },
  ])('reports $change', async ({ apply, undo, expected }) => {
    await queryOnce(db.url, apply);
    try {
      expect(await drift()).toEqual([expect.stringMatching(expected)]);
    } finally {
      await queryOnce(db.url, undo);
    }
    expect(await drift()).toEqual([]);
  });
});
