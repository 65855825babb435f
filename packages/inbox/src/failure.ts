/**
 * Why applying an event failed, and what the consumer does about it:
 *
 * - `deterministic`: the event itself is the problem, and every delivery fails the same way —
 *   PostgreSQL data exceptions (SQLSTATE class 22: a value out of range, invalid text for a uuid)
 *   and integrity constraint violations (class 23: unique, foreign key, check), a zod contract a
 *   handler checks, Prisma's wrapping of either, or a handler's own `PoisonEventError`. The event
 *   is dead-lettered alone and the partition moves on.
 * - `transient`: anything else — a connection refused or cut (class 08, 57P01), a serialization
 *   failure (40001), a deadlock (40P01), a statement timeout (57014), a provider that is down, an
 *   error we do not recognise. The chunk is rolled back and retried with backoff; nothing is
 *   skipped, so an unknown error can stall a partition, which /healthz and an alert then report.
 */
export type FailureKind = 'deterministic' | 'transient';

/**
 * The handler of the event at `index` of the chunk (or of the events a batch handler was given)
 * threw `cause`; the transaction rolled back. Classified by its cause.
 */
export class EventFailedError extends Error {
  override readonly name = 'EventFailedError';
  readonly index: number;
  override readonly cause: unknown;
  constructor(index: number, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.index = index;
    this.cause = cause;
  }
}

/** Thrown by a handler that knows an event can never be applied (the consumer dead-letters it). */
export class PoisonEventError extends Error {
  override readonly name = 'PoisonEventError';
}

/**
 * Prisma's known-request codes that mean "this data cannot be stored" (prisma.io/docs, error
 * reference): value too long, unique / foreign key / constraint violations, invalid value, null
 * in a required column, value out of range.
 */
const PRISMA_DETERMINISTIC = new Set([
  'P2000',
  'P2002',
  'P2003',
  'P2004',
  'P2005',
  'P2006',
  'P2007',
  'P2011',
  'P2012',
  'P2019',
  'P2020',
  'P2023',
  'P2033',
]);

const SQLSTATE = /^[0-9A-Z]{5}$/;
const PRISMA_CODE = /^P\d{4}$/;

type Found = {
  sqlState?: string;
  prismaCode?: string;
  zod?: boolean;
  poison?: boolean;
  prismaValidation?: boolean;
};

/**
 * Walk the error, its `cause` chain and Prisma's `meta` (Prisma 7 through @prisma/adapter-pg puts
 * the server's SQLSTATE at `meta.driverAdapterError.cause.originalCode`; node-postgres puts it at
 * `code`) and collect what identifies the failure. The first SQLSTATE found wins.
 */
function inspect(err: unknown, found: Found = {}, depth = 0): Found {
  if (depth > 8 || err === null || typeof err !== 'object') return found;
  const e = err as Record<string, unknown>;
  if (e.name === 'ZodError') found.zod = true;
  if (e.name === 'PoisonEventError') found.poison = true;
  if (e.name === 'PrismaClientValidationError') found.prismaValidation = true;
  for (const key of ['originalCode', 'code'] as const) {
    const code = e[key];
    if (typeof code !== 'string') continue;
    if (PRISMA_CODE.test(code)) found.prismaCode ??= code;
    else if (SQLSTATE.test(code)) found.sqlState ??= code;
  }
  for (const key of ['cause', 'meta', 'driverAdapterError']) inspect(e[key], found, depth + 1);
  return found;
}

export type Failure = { kind: FailureKind; reason: string };

/** Classify a failure and say why, in a form fit for a `dlt_reason` header and a log line. */
export function classifyFailure(err: unknown): Failure {
  const found = inspect(err);
  const message = err instanceof Error ? err.message : String(err);
  const oneLine = message.replace(/\s+/g, ' ').trim();
  if (found.sqlState) {
    const cls = found.sqlState.slice(0, 2);
    const kind = cls === '22' || cls === '23' ? 'deterministic' : 'transient';
    return { kind, reason: `SQLSTATE ${found.sqlState}: ${oneLine}` };
  }
  if (found.prismaCode && PRISMA_DETERMINISTIC.has(found.prismaCode))
    return { kind: 'deterministic', reason: `${found.prismaCode}: ${oneLine}` };
  if (found.zod || found.poison || found.prismaValidation) return { kind: 'deterministic', reason: oneLine };
  return { kind: 'transient', reason: oneLine };
}
