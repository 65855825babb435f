import { fileURLToPath } from 'node:url';
import { sharedMigrations } from '@outbox/inbox';
import { migrateDatabase } from '@outbox/runtime/migrate';

// The service itself writes through the consumer's pg pool (packages/inbox); Prisma is for its
// tests only (test/prisma.ts) and for checking schema.prisma against the migrations.

const inventoryMigrations = {
  dir: fileURLToPath(new URL('../migrations', import.meta.url)),
  table: 'service_migrations',
};

/** Create the inventory database if needed and apply the shared inbox/outbox migrations, then the inventory ones. */
export function migrate(databaseUrl: string): Promise<string[]> {
  return migrateDatabase(databaseUrl, [sharedMigrations, inventoryMigrations]);
}
