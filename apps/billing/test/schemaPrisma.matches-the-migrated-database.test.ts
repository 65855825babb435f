import { fileURLToPath } from 'node:url';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { findSchemaDrift } from '@outbox/schema-drift';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db.ts';

useLeakGuard();

const schemaPath = fileURLToPath(new URL('../prisma/schema.prisma', import.meta.url));
// Not modelled in Prisma on purpose: the shared outbox/inbox and the two migration history tables.
const ignoreTables = ['outbox', 'processed_events', 'shared_migrations', 'service_migrations'];

// schema.prisma does not create the tables (the SQL migrations do, see docs/migrations.md): this
// keeps the two provably in step.
describe('billing schema.prisma matches the migrated database', () => {
  let db: TestDatabase;
  const drift = () => findSchemaDrift({ schemaPath, databaseUrl: db.url, ignoreTables });

  beforeAll(async () => {
    db = await createTestDatabase('billing_schema_drift');
    await migrate(db.url);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('has no drift', async () => {
    expect(await drift()).toEqual([]);
  });

  it('reports a missing unique constraint (the payment idempotency key)', async () => {
    await queryOnce(db.url, 'alter table payments drop constraint payments_event_id_key');
    try {
      expect(await drift()).toEqual([
        'payments (model Payment): schema.prisma says unique (event_id), database has no such unique constraint or index',
      ]);
    } finally {
      await queryOnce(db.url, 'alter table payments add constraint payments_event_id_key unique (event_id)');
    }
    expect(await drift()).toEqual([]);
  });
});
