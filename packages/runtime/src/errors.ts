/** Normalize anything thrown into an Error, once, keeping the original as `cause`. */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(typeof thrown === 'string' ? thrown : JSON.stringify(thrown), { cause: thrown });
}

/** Postgres error codes this project reacts to (https://www.postgresql.org/docs/15/errcodes-appendix.html). */
export const PG_UNIQUE_VIOLATION = '23505'; // duplicate key: an idempotency key or inbox row already exists
export const PG_DUPLICATE_DATABASE = '42P04'; // CREATE DATABASE raced with another creator
