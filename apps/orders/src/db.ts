import { fileURLToPath } from 'node:url';
import { sharedMigrations } from '@outbox/inbox';
import { type DatabaseTimeouts, defaultDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { migrateDatabase } from '@outbox/runtime/migrate';
import { prismaOptions } from '@outbox/runtime/prisma';
import { PrismaClient, type Prisma as PrismaTypes } from './generated/prisma/client.ts';

export type Prisma = InstanceType<typeof PrismaClient>;
/** The client an interactive transaction hands to its callback. */
export type Tx = PrismaTypes.TransactionClient;

const POOL_WAIT_FIRST_BY_MS = 1_000;

/**
 * The Prisma client over node-postgres, with the timeouts every app shares: a database that stops
 * answering fails requests (503, see http/databaseUnavailable.ts) instead of hanging them.
 * `poolSize` connections at most (DATABASE_POOL_SIZE); the API admits fewer requests than that
 * into their database work at once (http/admission.ts).
 */
export function createPrisma(
  databaseUrl: string,
  timeouts: DatabaseTimeouts = defaultDatabaseTimeouts,
  poolSize?: number,
): Prisma {
  const options = prismaOptions(databaseUrl, timeouts, poolSize);
  // Prisma's maxWait and the pool's own wait for a free connection are one setting; the pool's
  // ends first, so an exhausted pool reports itself as such (http/overload.ts), never as Prisma's
  // P2028, which a server that does not answer gives too (http/databaseUnavailable.ts).
  const maxWait = options.transactionOptions.maxWait + POOL_WAIT_FIRST_BY_MS;
  return new PrismaClient({ ...options, transactionOptions: { ...options.transactionOptions, maxWait } });
}

const ordersMigrations = {
  dir: fileURLToPath(new URL('../migrations', import.meta.url)),
  table: 'service_migrations',
};

/** Create the orders database if needed and apply the shared outbox migrations, then the orders ones. */
export function migrate(databaseUrl: string): Promise<string[]> {
  return migrateDatabase(databaseUrl, [sharedMigrations, ordersMigrations]);
}
