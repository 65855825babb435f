import { fileURLToPath } from 'node:url';
import { sharedMigrations } from '@outbox/inbox';
import { migrateDatabase } from '@outbox/runtime/migrate';

// The service itself writes through the consumer's pg pool (packages/inbox); Prisma is for its
// tests only (test/prisma.ts) and for checking schema.prisma against the migrations.

const billingMigrations = {
  dir: fileURLToPath(new URL('../migrations', import.meta.url)),
  table: 'service_migrations',
};

/** Create the billing database if needed and apply the shared inbox/outbox migrations, then the billing ones. */
export function migrate(databaseUrl: string): Promise<string[]> {
  return migrateDatabase(databaseUrl, [sharedMigrations, billingMigrations]);
}
