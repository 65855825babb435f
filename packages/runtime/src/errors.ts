/** Normalize anything thrown into an Error, once, keeping the original as `cause`. */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(typeof thrown === 'string' ? thrown : JSON.stringify(thrown), { cause: thrown });
}

/** Postgres error codes this project reacts to (https://www.postgresql.org/docs/15/errcodes-appendix.html). */
export const PG_UNIQUE_VIOLATION = '23505'; // duplicate key: an idempotency key or inbox row already exists
export const PG_DUPLICATE_DATABASE = '42P04'; // CREATE DATABASE raced with another creator

/**
 * What a log line says of an error: its message, its code, the operation that failed and the host
 * it failed against — and nothing else. pino's default serializer copies every property, and
 * node-postgres hangs the whole client on an idle connection's error (its statements' SQL, its type
 * table, its socket, its password): kilobytes per line, with credentials. A server error's `detail`
 * quotes the row's values ("Key (id)=(…) already exists"), so it is left out too.
 */
export type LoggedError = {
  type: string;
  message: string;
  code?: string;
  operation?: string;
  target?: string;
  stack?: string;
  cause?: LoggedError;
  /** A Kafka protocol error's name (REBALANCE_IN_PROGRESS, NOT_COORDINATOR, …). */
  reason?: string;
  /** The distinct reasons inside an error that gathers several (a Kafka response's per-partition errors). */
  reasons?: string[];
};

type ErrorFields = Error & {
  code?: unknown;
  operation?: unknown;
  syscall?: unknown;
  address?: unknown;
  port?: unknown;
  hostname?: unknown;
  broker?: unknown;
  severity?: unknown;
  client?: { host?: unknown; port?: unknown; database?: unknown };
  apiId?: unknown;
  errors?: unknown;
};

/** At most this many distinct reasons of an error that gathers several. */
const MAX_REASONS = 5;

/** The log's `err` serializer (logger.ts); a cause is followed a few levels deep. */
export function loggedError(thrown: unknown, depth = 0): LoggedError {
  const error = toError(thrown) as ErrorFields;
  const code =
    typeof error.code === 'string' || typeof error.code === 'number' ? String(error.code) : undefined;
  const operation = operationOf(error);
  const target = targetOf(error);
  const reasons = reasonsOf(error);
  return {
    type: error.name,
    message: withoutCredentials(error.message),
    ...(code ? { code } : {}),
    ...(operation ? { operation } : {}),
    ...(target ? { target } : {}),
    ...(typeof error.apiId === 'string' ? { reason: error.apiId } : {}),
    ...(reasons.length > 0 ? { reasons } : {}),
    ...(error.stack ? { stack: withoutCredentials(error.stack) } : {}),
    ...(error.cause !== undefined && error.cause !== thrown && depth < 3
      ? { cause: loggedError(error.cause, depth + 1) }
      : {}),
  };
}

/**
 * The reasons inside an error that gathers several: @platformatic/kafka answers a failed offset
 * commit with one error for the response whose message names only the API; which group error
 * (a rebalance under way, a generation gone) is in the errors it holds.
 */
function reasonsOf(error: ErrorFields): string[] {
  if (!Array.isArray(error.errors)) return [];
  const reasons = new Set<string>();
  for (const inner of error.errors as ErrorFields[]) {
    const reason =
      typeof inner?.apiId === 'string' ? inner.apiId : inner instanceof Error ? inner.message : undefined;
    if (reason) reasons.add(withoutCredentials(reason));
    if (reasons.size === MAX_REASONS) break;
  }
  return [...reasons];
}

/** Ours when the code said it; a socket's system call; node-postgres's idle connection or statement. */
function operationOf(error: ErrorFields): string | undefined {
  if (typeof error.operation === 'string') return error.operation;
  if (typeof error.syscall === 'string') return error.syscall;
  // pg-pool attaches the client only to the error of a connection that died idle in the pool.
  if (error.client) return 'idle connection';
  // A server's answer to a statement carries its severity (ERROR, FATAL).
  if (typeof error.severity === 'string') return 'statement';
  return undefined;
}

/** host:port (and /database for PostgreSQL), from what the error itself carries. */
function targetOf(error: ErrorFields): string | undefined {
  if (typeof error.address === 'string') {
    return error.port !== undefined ? `${error.address}:${String(error.port)}` : error.address;
  }
  if (typeof error.hostname === 'string') return error.hostname; // a failed DNS lookup
  if (typeof error.broker === 'string') return error.broker; // kafkajs: host:port
  const client = error.client;
  if (client && typeof client.host === 'string') {
    return `${client.host}:${String(client.port)}${typeof client.database === 'string' ? `/${client.database}` : ''}`;
  }
  return undefined;
}

/** `scheme://user:password@host` → `scheme://user:***@host`, wherever a URL sits in a message. */
export function withoutCredentials(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+@/gi, '$1***@');
}
