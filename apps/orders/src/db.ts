import { fileURLToPath } from 'node:url';
import { sharedMigrations } from '@outbox/events';
import { migrateDatabase } from '@outbox/service/migrate';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient, type Prisma as PrismaTypes } from './generated/prisma/client.ts';

export type Prisma = InstanceType<typeof PrismaClient>;
/** The client an interactive transaction hands to its callback. */
export type Tx = PrismaTypes.TransactionClient;

/** How long the client waits on the database before it gives up (config: DB_*_TIMEOUT_MS). */
export type DatabaseTimeouts = {
  /** Opening a connection; 0 waits for ever. */
  connectMs: number;
  /** One statement, enforced by the server (statement_timeout); 0 turns it off. */
  statementMs: number;
  /** A transaction idle while holding locks, ended by the server; 0 turns it off. */
  idleInTransactionMs: number;
};

export const DEFAULT_TIMEOUTS: DatabaseTimeouts = {
  connectMs: 5_000,
  statementMs: 10_000,
  idleInTransactionMs: 30_000,
};

/**
 * The Prisma client over node-postgres. The timeouts make a database that stops answering fail
 * requests (503, see http/databaseUnavailable.ts) instead of hanging them with their locks held.
 */
export function createPrisma(databaseUrl: string, timeouts: DatabaseTimeouts = DEFAULT_TIMEOUTS): Prisma {
  return new PrismaClient({
    adapter: new PrismaPg({
      connectionString: databaseUrl,
      connectionTimeoutMillis: timeouts.connectMs,
      statement_timeout: timeouts.statementMs,
      idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    }),
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
