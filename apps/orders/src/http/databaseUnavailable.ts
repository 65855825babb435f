import { HttpProblem } from './problem.ts';

/**
 * Errors that mean "the database cannot be reached right now", as opposed to a bug: Prisma's
 * connection error codes (https://www.prisma.io/docs/orm/reference/error-reference) and the
 * PostgreSQL SQLSTATEs a server sends while shutting down or starting up. The transaction they
 * interrupted was rolled back, so nothing is half-written and the client may simply retry.
 */
const UNAVAILABLE_CODES = new Set([
  'P1001', // can't reach database server
  'P1002', // database server timed out
  'P1008', // operation timed out
  'P1017', // server closed the connection
  'P2024', // timed out fetching a connection from the pool
  'P2028', // could not start a transaction in time (pool exhausted): rolled back, nothing written
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up)
  '08000', // connection_exception
  '08003', // connection_does_not_exist
  '08006', // connection_failure
]);

export const RETRY_AFTER_SECONDS = 5;

/**
 * node-postgres reports a connection the server dropped in the middle of a statement (a restart in
 * immediate mode) as a plain Error with this message and no code, and Prisma passes it on as is.
 */
const CONNECTION_LOST = /^Connection terminated/;

export function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return UNAVAILABLE_CODES.has(code);
  return err instanceof Error && CONNECTION_LOST.test(err.message);
}

export function databaseUnavailableProblem(): HttpProblem {
  return new HttpProblem(
    503,
    'urn:problem:database-unavailable',
    'Database unavailable',
    `The orders database cannot be reached. Nothing was written; retry in ${RETRY_AFTER_SECONDS} seconds.`,
  );
}
