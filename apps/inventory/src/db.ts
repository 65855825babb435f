import { fileURLToPath } from 'node:url';
import { sharedMigrations } from '@outbox/events';
import { migrateDatabase } from '@outbox/service/migrate';
import { PrismaPg } from '@prisma/adapter-pg';
import { z } from 'zod';
import { PrismaClient, type Prisma as PrismaTypes } from './generated/prisma/client.ts';

export type Prisma = InstanceType<typeof PrismaClient>;
/** The client an interactive transaction hands to its callback. */
export type Tx = PrismaTypes.TransactionClient;

/**
 * How long the consumer waits on its database before giving up. Without them a black-holed
 * database (a dead host, a dropped route) or a row lock held by someone else hangs the consumer
 * for ever while its health says ok; with them the event fails fast and is retried.
 */
export const databaseTimeoutSettings = {
  /** Opening a connection; also the longest a transaction waits for a free pooled connection. */
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /** One statement, lock waits included (server side), plus 1 s on the client for a silent server. */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /**
   * One whole consumer transaction (Prisma's interactive transaction timeout; its default is 5 s).
   * The server also ends a session left idle inside a transaction for this long.
   */
  DATABASE_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
};

export type DatabaseTimeouts = {
  DATABASE_CONNECT_TIMEOUT_MS: number;
  DATABASE_STATEMENT_TIMEOUT_MS: number;
  DATABASE_TRANSACTION_TIMEOUT_MS: number;
};

export const defaultDatabaseTimeouts: DatabaseTimeouts = z.object(databaseTimeoutSettings).parse({});

/** A statement must fit in a transaction, or every slow statement would end as a transaction timeout. */
export function refineDatabaseTimeouts<S extends z.ZodType<DatabaseTimeouts>>(schema: S) {
  return schema.refine((c) => c.DATABASE_STATEMENT_TIMEOUT_MS < c.DATABASE_TRANSACTION_TIMEOUT_MS, {
    path: ['DATABASE_STATEMENT_TIMEOUT_MS'],
    message: 'must be shorter than DATABASE_TRANSACTION_TIMEOUT_MS',
  });
}

export function createPrisma(
  databaseUrl: string,
  timeouts: DatabaseTimeouts = defaultDatabaseTimeouts,
): Prisma {
  const adapter = new PrismaPg({
    connectionString: databaseUrl,
    connectionTimeoutMillis: timeouts.DATABASE_CONNECT_TIMEOUT_MS,
    statement_timeout: timeouts.DATABASE_STATEMENT_TIMEOUT_MS,
    // Client side: the server's statement_timeout cannot fire when the server is not answering.
    query_timeout: timeouts.DATABASE_STATEMENT_TIMEOUT_MS + 1_000,
    idle_in_transaction_session_timeout: timeouts.DATABASE_TRANSACTION_TIMEOUT_MS,
  });
  return new PrismaClient({
    adapter,
    transactionOptions: {
      maxWait: timeouts.DATABASE_CONNECT_TIMEOUT_MS,
      timeout: timeouts.DATABASE_TRANSACTION_TIMEOUT_MS,
    },
  });
}

const inventoryMigrations = {
  dir: fileURLToPath(new URL('../migrations', import.meta.url)),
  table: 'service_migrations',
};

export function migrate(databaseUrl: string): Promise<string[]> {
  return migrateDatabase(databaseUrl, [sharedMigrations, inventoryMigrations]);
}
