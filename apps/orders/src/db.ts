import { fileURLToPath } from 'node:url';
import { sharedMigrations } from '@outbox/inbox';
import type { DatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { migrateDatabase } from '@outbox/runtime/migrate';
import { prismaOptions } from '@outbox/runtime/prisma';
import { PrismaClient, type Prisma as PrismaTypes } from './generated/prisma/client.ts';

export type Prisma = InstanceType<typeof PrismaClient>;
/** The client an interactive transaction hands to its callback. */
export type Tx = PrismaTypes.TransactionClient;

/**
 * The Prisma client over node-postgres, with the timeouts every app shares: a database that stops
 * answering fails requests (503, see http/databaseUnavailable.ts) instead of hanging them.
 */
export function createPrisma(databaseUrl: string, timeouts?: DatabaseTimeouts): Prisma {
  return new PrismaClient(prismaOptions(databaseUrl, timeouts));
}

const ordersMigrations = {
  dir: fileURLToPath(new URL('../migrations', import.meta.url)),
  table: 'service_migrations',
};

/** Create the orders database if needed and apply the shared outbox migrations, then the orders ones. */
export function migrate(databaseUrl: string): Promise<string[]> {
  return migrateDatabase(databaseUrl, [sharedMigrations, ordersMigrations]);
}
