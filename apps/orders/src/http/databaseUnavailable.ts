import { HttpProblem } from '@outbox/runtime/problem';
import { isPoolExhausted } from './overload.ts';

/**
 * Errors that mean "the database cannot be reached right now", as opposed to a bug: Prisma's
 * connection error codes (https://www.prisma.io/docs/orm/reference/error-reference) and the
 * PostgreSQL SQLSTATEs a server sends while shutting down or starting up. One that reaches the
 * edge wrote nothing: an order whose COMMIT was on its way when it struck was checked first
 * (orders/commitOutcome.ts), and comes here only when it was certainly not committed.
 */
const UNAVAILABLE_CODES = new Set([
  'P1001', // can't reach database server
  'P1002', // database server timed out
  'P1008', // operation timed out
  'P1017', // server closed the connection
  // Could not start a transaction in time: rolled back, nothing written. The API's own pool being
  // exhausted is not this (overload.ts): its wait ends before Prisma's maxWait does (db.ts).
  'P2028',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up)
  '08000', // connection_exception
  '08003', // connection_does_not_exist
  '08006', // connection_failure
]);

/**
 * What Prisma's PostgreSQL driver adapter (@prisma/adapter-pg) calls a connection that is gone:
 * refused, reset, timed out, or the server out of connection slots.
 */
const UNAVAILABLE_ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
]);

const RETRY_AFTER_SECONDS = 5;

/**
 * node-postgres reports a connection the server dropped as a plain Error with no code, and Prisma
 * passes it on as is: "Connection terminated…" when it broke in the middle of a statement (a
 * restart in immediate mode), "Client has encountered a connection error and is not queryable"
 * when it broke between two statements of a transaction (pg_terminate_backend, then the next query).
 */
const CONNECTION_LOST =
  /^(Connection terminated|Client has encountered a connection error and is not queryable)/;

/**
 * Through the driver adapter an error arrives in one of three shapes, and each was seen while
 * PostgreSQL restarted under load: Prisma's own code (`P1001`…); Prisma's generic `P2039` carrying
 * the adapter's error in `meta.driverAdapterError` (a SQLSTATE such as 57P03 "starting up", or a
 * kind such as `ConnectionClosed`); or the adapter's `DriverAdapterError` itself, its payload in
 * `cause` (a commit on a connection the server reset). Each code or kind found is checked.
 * A pool-acquire timeout is not the database being away but the API being overloaded (overload.ts).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || isPoolExhausted(err)) return false;
  const { code, meta, cause } = err as { code?: unknown; meta?: unknown; cause?: unknown };
  const adapterError = (meta as { driverAdapterError?: { cause?: unknown } } | undefined)?.driverAdapterError;
  const payloads = [adapterError?.cause, (err as Error).name === 'DriverAdapterError' ? cause : undefined];
  for (const payload of payloads) {
    const { kind, code: sqlState } = (payload ?? {}) as { kind?: unknown; code?: unknown };
    if (typeof kind === 'string' && UNAVAILABLE_ADAPTER_KINDS.has(kind)) return true;
    if (typeof sqlState === 'string' && UNAVAILABLE_CODES.has(sqlState)) return true;
  }
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  return err instanceof Error && CONNECTION_LOST.test(err.message);
}

/**
 * SQLSTATEs of a statement the server cancelled before it finished: `statement_timeout` (or a
 * cancel request) and `lock_timeout`. The database is there, but this request's transaction did not
 * get done in time (a lock held elsewhere, a server too busy) and was rolled back: nothing was
 * written, and the same request may be sent again. Not a bug, so not a 500.
 */
const TIMEOUT_CODES = new Set(['57014', '55P03']);

/** The SQLSTATEs an error carries: Prisma's raw-query error (`P2010`) in `meta.code`, the adapter's in its cause. */
function sqlStatesOf(err: object): unknown[] {
  const { meta, cause } = err as { meta?: unknown; cause?: unknown };
  const { code, driverAdapterError } = (meta ?? {}) as {
    code?: unknown;
    driverAdapterError?: { cause?: unknown };
  };
  const adapterCause = (err as Error).name === 'DriverAdapterError' ? cause : driverAdapterError?.cause;
  return [code, (adapterCause as { code?: unknown } | undefined)?.code];
}

/** A statement of the request's transaction was cancelled by a timeout (TIMEOUT_CODES): rolled back. */
export function isDatabaseTimeout(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  return sqlStatesOf(err).some((code) => typeof code === 'string' && TIMEOUT_CODES.has(code));
}

/** 503 with Retry-After: the statement timed out and its transaction was rolled back. */
export function databaseTimeoutProblem(): HttpProblem {
  return new HttpProblem(
    503,
    'Database timeout',
    `The orders database did not finish this request in time (a statement or lock timeout). Nothing was written; retry in ${RETRY_AFTER_SECONDS} seconds.`,
    { type: 'urn:problem:database-timeout', headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } },
  );
}

/** 503 with Retry-After: the transaction was rolled back, so the same request may simply be sent again. */
export function databaseUnavailableProblem(): HttpProblem {
  return new HttpProblem(
    503,
    'Database unavailable',
    `The orders database cannot be reached. Nothing was written; retry in ${RETRY_AFTER_SECONDS} seconds.`,
    { type: 'urn:problem:database-unavailable', headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } },
  );
}

/**
 * 503 for an order whose COMMIT lost its answer and could not be checked: it may exist. The client
 * learns its id, where to look, and the one retry that cannot create it twice.
 */
export function commitOutcomeUnknownProblem(orderId: string): HttpProblem {
  return new HttpProblem(
    503,
    'Order outcome unknown',
    `The connection to the orders database broke while order ${orderId} was being committed, and ` +
      'whether it was could not be checked: the order may exist. GET /orders/' +
      `${orderId} shows it once it does. Retry with the same Idempotency-Key in ${RETRY_AFTER_SECONDS} ` +
      'seconds: it answers with this order if it was created, and creates the order once if it was ' +
      'not. A retry without that key may create a second order.',
    { type: 'urn:problem:commit-outcome-unknown', headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } },
  );
}
