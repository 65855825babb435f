import { z } from 'zod';
import { timerMs } from './config.ts';

/**
 * How long a service waits on its database before giving up, one definition for every app's
 * Prisma client (orders, inventory, billing). Without them a black-holed database (a dead host, a
 * dropped route) or a row lock held by someone else hangs a request or a consumer for ever while
 * its health says ok; with them the work fails fast and is retried (or answered 503 by the API).
 */
export const databaseTimeoutSettings = {
  /** Opening a connection; also the longest a transaction waits for a free pooled connection. */
  DATABASE_CONNECT_TIMEOUT_MS: timerMs().default(5_000),
  /** One statement, lock waits included (server side), plus 1 s on the client for a silent server. */
  DATABASE_STATEMENT_TIMEOUT_MS: timerMs().default(5_000),
  /**
   * One whole interactive transaction (Prisma's timeout; its default is 5 s). The server also ends
   * a session left idle inside a transaction for this long.
   */
  DATABASE_TRANSACTION_TIMEOUT_MS: timerMs().default(10_000),
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

/** The node-postgres pool options (for `new PrismaPg({ connectionString, ...poolTimeouts(t) })`). */
export function poolTimeouts(timeouts: DatabaseTimeouts) {
  return {
    connectionTimeoutMillis: timeouts.DATABASE_CONNECT_TIMEOUT_MS,
    statement_timeout: timeouts.DATABASE_STATEMENT_TIMEOUT_MS,
    // Client side: the server's statement_timeout cannot fire when the server is not answering.
    query_timeout: timeouts.DATABASE_STATEMENT_TIMEOUT_MS + 1_000,
    idle_in_transaction_session_timeout: timeouts.DATABASE_TRANSACTION_TIMEOUT_MS,
  };
}

/** Prisma's interactive-transaction options (for `new PrismaClient({ transactionOptions })`). */
export function transactionTimeouts(timeouts: DatabaseTimeouts) {
  return {
    maxWait: timeouts.DATABASE_CONNECT_TIMEOUT_MS,
    timeout: timeouts.DATABASE_TRANSACTION_TIMEOUT_MS,
  };
}
