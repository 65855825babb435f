import { createConnectionPool } from './httpClient.ts';
import { createOrderPlanner, type OrderMix } from './orderMix.ts';
import { type LatencySummary, summarizeLatencies } from './percentiles.ts';
import { runScheduled, type ScheduleResult } from './scheduler.ts';
import {
  DEFAULT_RETRY,
  isShed,
  type RetryPolicy,
  rejectionReason,
  type SentOrder,
  sendOrder,
} from './sendOrder.ts';

type LoadOptions = {
  /** The orders API, e.g. http://127.0.0.1:3001. */
  ordersUrl: string;
  /** Orders per second, held steady; omitted with `burst`. */
  rate?: number;
  /** Send as fast as `concurrency` allows. */
  burst?: boolean;
  /** Requests in flight at most (default 16). */
  concurrency?: number;
  /** Stop after this many orders ... */
  count?: number;
  /** ... or after this long, whichever comes first. */
  durationMs?: number;
  /** Relative weights of the kinds of order (default valid 85, outOfStock 5, declined 5, invalid 5). */
  mix?: OrderMix;
  /** Makes the sequence of kinds and bodies repeatable; random (and reported) when omitted. */
  seed?: number;
  /** Stops sending; requests in flight are finished, not abandoned, so the result stays true. */
  signal?: AbortSignal;
  onProgress?: (progress: LoadProgress) => void;
  /** How transient failures are retried (default 5 attempts, 100 ms doubling up to 5 s, 10 s timeout). */
  retry?: Partial<RetryPolicy>;
};

export type LoadProgress = {
  sent: number;
  accepted: number;
  /** Orders whose last answer was 503 overloaded: the API shed them (nothing written). */
  shed: number;
  rejected: number;
  inFlight: number;
  /** Attempts beyond the first, over all orders so far. */
  retries: number;
  elapsedMs: number;
  /** Orders sent per second since the start. */
  rate: number;
  /** The targets, for a progress bar. */
  count?: number;
  durationMs?: number;
};

export type LoadResult = {
  /** Epoch milliseconds. */
  startedAt: number;
  finishedAt: number;
  /** Every order request, in the order they were sent. */
  orders: SentOrder[];
  accepted: number;
  /**
   * Orders the API shed: their last answer was 503 overloaded, refused before any work, nothing
   * written. Neither an error nor lost: the API protecting the orders it accepts.
   */
  shed: number;
  /** Answers that were 503 overloaded, over every attempt (an order shed, then accepted on a retry, counts here). */
  shedAnswers: number;
  /**
   * Orders never accepted with an attempt that got no answer: the client cannot know whether they
   * exist (a retry shed or refused after a lost answer does not say). Only these may be committed
   * without a 201.
   */
  unknownOutcome: number;
  /** How long the last attempt took to be answered, client side: of the accepted orders and of the shed ones. */
  answerMs: { accepted: LatencySummary; shed: LatencySummary };
  /** Requests that did not create an order and were not shed, by reason: `400 validation`, `503 database-unavailable`, `network error`. */
  rejected: Record<string, number>;
  seed: number;
  /** The rate asked for (undefined for a burst) and the concurrency it ran with. */
  targetRate?: number;
  concurrency: number;
  /** Orders started per second, first to last start (the tail of slow answers does not dilute it). */
  achievedRate: number;
};

const DEFAULT_CONCURRENCY = 16;

/** Drive the orders API with a mix of orders and record what it answered to each. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  checkOptions(options, concurrency);
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const nextOrder = createOrderPlanner({ seed, ...(options.mix ? { mix: options.mix } : {}) });
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  const base = options.ordersUrl.endsWith('/') ? options.ordersUrl : `${options.ordersUrl}/`;
  const ordersUrl = new URL('orders', base);

  const orders: SentOrder[] = [];
  const progress: LoadProgress = {
    sent: 0,
    accepted: 0,
    shed: 0,
    rejected: 0,
    inFlight: 0,
    retries: 0,
    elapsedMs: 0,
    rate: 0,
    ...(options.count === undefined ? {} : { count: options.count }),
    ...(options.durationMs === undefined ? {} : { durationMs: options.durationMs }),
  };
  const startedAt = Date.now();
  const { onProgress } = options;
  const report = () => {
    if (!onProgress) return;
    progress.elapsedMs = Date.now() - startedAt;
    progress.rate = progress.elapsedMs > 0 ? (progress.sent * 1000) / progress.elapsedMs : 0;
    onProgress({ ...progress });
  };

  const pool = createConnectionPool(concurrency);
  let schedule: ScheduleResult;
  try {
    schedule = await runScheduled(
      {
        ...(options.burst ? {} : { rate: options.rate }),
        concurrency,
        ...(options.count === undefined ? {} : { count: options.count }),
        ...(options.durationMs === undefined ? {} : { durationMs: options.durationMs }),
        ...(options.signal ? { signal: options.signal } : {}),
      },
      async (index) => {
        // Planned before the first await, so the n-th request is the same for the same seed.
        const planned = nextOrder();
        progress.sent++;
        progress.inFlight++;
        report();
        const sent = await sendOrder(pool, ordersUrl, planned, retry, options.signal);
        orders[index] = sent;
        progress.inFlight--;
        progress.retries += sent.attempts - 1;
        if (sent.status === 201) progress.accepted++;
        else if (isShed(sent)) progress.shed++;
        else progress.rejected++;
        report();
      },
    );
  } finally {
    pool.destroy();
  }
  const finishedAt = Date.now();

  const answers = tallyAnswers(orders);
  return {
    startedAt,
    finishedAt,
    orders,
    accepted: progress.accepted,
    shed: progress.shed,
    shedAnswers: answers.shedAnswers,
    unknownOutcome: answers.unknownOutcome,
    answerMs: answers.answerMs,
    rejected: answers.rejected,
    seed,
    ...(options.burst ? {} : { targetRate: options.rate }),
    concurrency,
    achievedRate: achievedRate(schedule),
  };
}

/** What the answers add up to, beyond the counts kept as they came (see LoadResult). */
function tallyAnswers(
  orders: SentOrder[],
): Pick<LoadResult, 'shedAnswers' | 'unknownOutcome' | 'answerMs' | 'rejected'> {
  const rejected: Record<string, number> = {};
  for (const sent of orders) {
    if (sent.status === 201 || isShed(sent)) continue;
    const reason = rejectionReason(sent);
    rejected[reason] = (rejected[reason] ?? 0) + 1;
  }
  return {
    shedAnswers: orders.reduce((sum, sent) => sum + (sent.shedAnswers ?? 0), 0),
    unknownOutcome: orders.filter((sent) => sent.status !== 201 && (sent.unanswered ?? 0) > 0).length,
    answerMs: {
      accepted: summarizeLatencies(orders.filter((o) => o.status === 201).map((o) => o.lastAttemptMs ?? 0)),
      shed: summarizeLatencies(orders.filter(isShed).map((o) => o.lastAttemptMs ?? 0)),
    },
    rejected,
  };
}

/** n starts spaced 1/rate apart span (n − 1)/rate: so a run that kept to the schedule reports the rate exactly. */
function achievedRate(schedule: ScheduleResult): number {
  const spanMs = schedule.lastStartAt - schedule.startedAt;
  return schedule.started > 1 && spanMs > 0 ? ((schedule.started - 1) * 1000) / spanMs : 0;
}

function checkOptions(options: LoadOptions, concurrency: number): void {
  if (options.burst && options.rate !== undefined) throw new Error('give either a rate or burst, not both');
  if (!options.burst && !(options.rate !== undefined && options.rate > 0)) {
    throw new Error('give a rate above 0 (orders per second), or burst: true');
  }
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new Error('concurrency must be an integer ≥ 1');
  if (options.count === undefined && options.durationMs === undefined && !options.signal) {
    throw new Error('give a count, a durationMs or a signal: otherwise the load never stops');
  }
}
