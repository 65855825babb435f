import pg from 'pg';
import { type DatabaseTimeouts, poolTimeouts } from './databaseTimeouts.ts';

/**
 * Named statements are parsed once per connection, but planned for their parameters every time.
 * Left to itself (`plan_cache_mode = auto`), PostgreSQL settles on a generic plan after five calls,
 * chosen while the tables are still small (a sequential scan is cheapest then) and kept as they
 * grow: in a long benchmark the `= any($1::uuid[])` statements crept from 0.1 to 4-15 ms each
 * (docs/performance.md).
 */
export const CUSTOM_PLANS = '-c plan_cache_mode=force_custom_plan';

/**
 * A node-postgres pool with the shared database timeouts: a black-holed database or a held lock
 * fails a statement after DATABASE_STATEMENT_TIMEOUT_MS, and the server ends a session left idle
 * inside a transaction after DATABASE_TRANSACTION_TIMEOUT_MS.
 */
export function createPool(
  databaseUrl: string,
  timeouts: DatabaseTimeouts,
  onIdleError: (err: Error) => void = () => {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    ...poolTimeouts(timeouts),
    options: CUSTOM_PLANS,
  });
  // An idle connection the server closed (a restart, pg_terminate_backend) is dropped from the
  // pool and the next checkout opens a new one; without a listener node-postgres would take the
  // whole process down with it.
  pool.on('error', onIdleError);
  return pool;
}

/**
 * `work` between BEGIN and COMMIT on one pooled connection; ROLLBACK when it throws. The
 * consumers' chunks run this way rather than through Prisma's interactive transactions: a chunk
 * is a handful of set-based statements, and Prisma's per-query cost was the largest share of a
 * consumer's CPU after the round trips themselves (docs/performance.md).
 */
export function transactionOn(pool: pg.Pool) {
  return async <T>(work: (tx: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    // A connection that dies while checked out (a database restart) emits 'error' on the client,
    // which would end the process without a listener; the statement in hand, or the next one,
    // fails with it instead, and the chunk is retried on a new connection.
    let broken: Error | undefined;
    const onError = (err: Error) => {
      broken = err;
    };
    client.on('error', onError);
    try {
      await client.query('begin');
      const result = await work(client);
      await client.query('commit');
      return result;
    } catch (err) {
      // A connection whose rollback fails too is broken: destroy it rather than pool it.
      broken ??= await client.query('rollback').then(
        () => undefined,
        (rollbackError: unknown) => rollbackError as Error,
      );
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  };
}

/** What every process reads for autovacuumWarning: the server's setting, `on` or `off`. */
export const SHOW_AUTOVACUUM = 'show autovacuum';

/**
 * The warning /healthz and the demo give when the server runs with autovacuum off, or undefined.
 * A warning, not a failure: everything works, but the outbox and processed_events, written and
 * deleted all day, keep their dead rows and stale statistics, and their queries slow down as they
 * grow (docs/production.md, "Outbox and inbox retention, and vacuum").
 */
export function autovacuumWarning(setting: string | undefined): string | undefined {
  if (setting !== 'off') return undefined;
  return (
    'PostgreSQL runs with autovacuum off: the outbox and processed_events keep their dead rows and ' +
    'stale statistics, and their queries slow down as they grow; turn it on (docs/production.md#outbox-and-inbox-retention-and-vacuum)'
  );
}

/** The server's autovacuumWarning, read once at start (a setting changes only with a reload); none if unreadable. */
export function readAutovacuumWarning(pool: pg.Pool): Promise<string | undefined> {
  return pool.query<{ autovacuum: string }>(SHOW_AUTOVACUUM).then(
    (result) => autovacuumWarning(result.rows[0]?.autovacuum),
    () => undefined,
  );
}
