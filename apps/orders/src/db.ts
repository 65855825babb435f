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

/**
 * The Prisma client over node-postgres. The timeouts (one definition for every app, in
 * @outbox/runtime) make a database that stops answering fail requests (503, see
 * http/databaseUnavailable.ts) instead of hanging them with their locks held.
 */
export function createPrisma(
  databaseUrl: string,
  timeouts: DatabaseTimeouts = defaultDatabaseTimeouts,
): Prisma {
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString: databaseUrl, ...poolTimeouts(timeouts) }),
    transactionOptions: transactionTimeouts(timeouts),
  });
}

const ordersMigrations = {
  dir: fileURLToPath(new URL('../migrations', import.meta.url)),
  table: 'service_migrations',
};

/** Create the orders database if needed and apply the shared outbox migrations, then the orders ones. */
export function migrate(databaseUrl: string): Promise<string[]> {
  return migrateDatabase(databaseUrl, [sharedMigrations, ordersMigrations]);
}
