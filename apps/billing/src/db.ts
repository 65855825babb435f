import { fileURLToPath } from 'node:url';
import { sharedMigrations } from '@outbox/inbox';
import {
  type DatabaseTimeouts,
  defaultDatabaseTimeouts,
  poolTimeouts,
  transactionTimeouts,
} from '@outbox/runtime/database-timeouts';
import { migrateDatabase } from '@outbox/runtime/migrate';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient, type Prisma as PrismaTypes } from './generated/prisma/client.ts';

export type Prisma = InstanceType<typeof PrismaClient>;
/** The client an interactive transaction hands to its callback. */
export type Tx = PrismaTypes.TransactionClient;

// The timeout settings are shared by every app (one definition, in @outbox/runtime).
export {
  type DatabaseTimeouts,
  databaseTimeoutSettings,
  defaultDatabaseTimeouts,
  refineDatabaseTimeouts,
} from '@outbox/runtime/database-timeouts';

export function createPrisma(
  databaseUrl: string,
  timeouts: DatabaseTimeouts = defaultDatabaseTimeouts,
): Prisma {
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString: databaseUrl, ...poolTimeouts(timeouts) }),
    transactionOptions: transactionTimeouts(timeouts),
  });
}

const billingMigrations = {
  dir: fileURLToPath(new URL('../migrations', import.meta.url)),
  table: 'service_migrations',
};

export function migrate(databaseUrl: string): Promise<string[]> {
  return migrateDatabase(databaseUrl, [sharedMigrations, billingMigrations]);
}
