import type { Logger } from 'pino';
import type { Prisma } from '../db.ts';
import type { BacklogReader } from '../http/admission.ts';

/**
 * Orders still undecided that do not count as a backlog: a few orders stuck on a reply that will
 * not come (the saga's timeout settles them, sagaTimeout.ts) must not hold the API's limit down
 * for minutes. A saga that falls behind leaves hundreds undecided, not ten.
 */
const STRAGGLERS = 10;

/**
 * How long the saga behind the API is taking now: the age of the oldest undecided order past the
 * stragglers. One row from the partial index on pending orders (orders_pending_idx), so it is cheap
 * to read a few times a second. It covers every step after the API: the orders relay, the broker,
 * inventory and billing with their relays, and the orders consumer recording both answers.
 */
const oldestUndecided = `
  select (extract(epoch from now() - created_at) * 1000)::float8 as age_ms
    from orders
   where status = 'PENDING'
   order by created_at
  offset $1::int
   limit 1`;

export type SagaBacklogOptions = {
  prisma: Prisma;
  logger: Logger;
  /** How often the age is read again; the admission limit reads the last value in between. */
  intervalMs?: number;
  /** Readings stop once the limit has not asked for this long (the API idle). */
  idleAfterMs?: number;
};

export type SagaBacklog = BacklogReader & { stop(): Promise<void> };

/**
 * Read the saga's backlog now and every `intervalMs` while the admission limit asks for it, keeping
 * the last value. Once the limit has not asked for `idleAfterMs` (the API took no request), it
 * reads nothing and forgets the value: an idle demo would otherwise run four queries a second for a
 * limit nobody meets, and the first request after a quiet spell must not be judged by a backlog
 * long gone. That request asks, and the next tick reads.
 */
export function startSagaBacklog({
  prisma,
  logger,
  intervalMs = 250,
  idleAfterMs = 10_000,
}: SagaBacklogOptions): SagaBacklog {
  let ageMs: number | undefined;
  let running: Promise<void> = Promise.resolve();
  let warned = false;
  let busy = false;
  let lastAsked = performance.now();
  const tick = () => {
    // A reading slower than the interval is not stacked up behind: the next tick skips.
    if (busy) return;
    if (performance.now() - lastAsked > idleAfterMs) {
      ageMs = undefined;
      return;
    }
    busy = true;
    running = prisma
      .$queryRawUnsafe<{ age_ms: number }[]>(oldestUndecided, STRAGGLERS)
      .then(
        (rows) => {
          ageMs = rows[0]?.age_ms ?? 0;
          warned = false;
        },
        (err: unknown) => {
          // The database away: the requests fail on their own; the limit keeps the last reading.
          if (!warned) logger.warn({ err }, 'reading the saga backlog failed; retrying');
          warned = true;
        },
      )
      .finally(() => {
        busy = false;
      });
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    ageMs: () => {
      lastAsked = performance.now();
      return ageMs;
    },
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
