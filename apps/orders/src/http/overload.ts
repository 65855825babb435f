import { HttpProblem } from '@outbox/runtime/problem';

/** The `type` of every answer that sheds load: nothing was written, send the same request later. */
export const OVERLOADED = 'urn:problem:overloaded';

/**
 * Timed out waiting for a free connection of the API's own pool: the pool is exhausted, the
 * database is fine. Prisma says P2024; through the driver adapter node-postgres' pool reports it
 * as a plain Error with this message (db.ts lets the pool's wait expire before Prisma's maxWait,
 * so it is this and never Prisma's P2028, which also covers a server that does not answer).
 */
const POOL_EXHAUSTED_CODE = 'P2024';
const POOL_EXHAUSTED_MESSAGE = 'timeout exceeded when trying to connect';

/** A pool-acquire timeout: overloaded, not "database unavailable". */
export function isPoolExhausted(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  return code === POOL_EXHAUSTED_CODE || message === POOL_EXHAUSTED_MESSAGE;
}

/** 503 + Retry-After for a request refused before any database work (or that found no connection). */
export function overloadedProblem(retryAfterSeconds: number): HttpProblem {
  return new HttpProblem(
    503,
    'Overloaded',
    `The orders API is at capacity and did not start this request. Nothing was written; send the same request again in ${retryAfterSeconds} second(s), with the same Idempotency-Key if it has one.`,
    { type: OVERLOADED, headers: { 'Retry-After': String(retryAfterSeconds) } },
  );
}
