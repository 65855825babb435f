/**
 * The adaptive admission limit: how many requests may do their database work at once, moved by
 * what it measures, as TCP moves its congestion window (AIMD, as in Netflix's concurrency-limits
 * `AIMDLimit`, with Gradient2's long-term latency average as the reference a sample is judged by).
 *
 * - Additive increase: each request that finishes while the limit is in use (at least half its
 *   slots taken) adds 1/limit, so the limit grows by about one slot per round of requests.
 * - Multiplicative decrease: the limit is cut by `backoffRatio` when the recent latency of the
 *   admitted work passes `tolerance` times its long-term average (the database or the CPU is
 *   saturated), or when the saga behind the API falls behind: its oldest undecided order is older
 *   than `backlogBoundMs`. Accepting at the API's pace while the relays and consumers cannot keep
 *   up only piles orders up downstream and makes every accepted order late. One cut per
 *   `cooldownMs` at most: a pause slows every request in flight at once, and is one signal.
 *
 * The limit never leaves [min, max]: `max` is what the connection pool can serve, `min` what the
 * API keeps accepting while the saga is stalled (a broker outage included: the API still takes
 * orders then, the outbox's point). Pure: time comes from the injected clock.
 */
export type AdaptiveLimitOptions = {
  min: number;
  max: number;
  /** The saga's oldest undecided order may be this old before the limit is cut. */
  backlogBoundMs: number;
  /** The recent latency may be this many times its long-term average before the limit is cut. */
  tolerance?: number;
  /** The limit after a cut, as a share of the limit before it. */
  backoffRatio?: number;
  /** At most one cut per this long. */
  cooldownMs?: number;
  now?: () => number;
};

/** Samples in the recent and the long-term latency averages (exponential, as Gradient2's). */
const RECENT_WINDOW = 10;
const LONG_WINDOW = 1_000;

/** An exponential moving average that is a plain mean of its first `window` samples. */
class Average {
  #value = 0;
  #count = 0;
  readonly #window: number;
  constructor(window: number) {
    this.#window = window;
  }

  add(sample: number): void {
    this.#count = Math.min(this.#count + 1, this.#window);
    this.#value += (sample - this.#value) / this.#count;
  }

  get value(): number | undefined {
    return this.#count === 0 ? undefined : this.#value;
  }

  get warm(): boolean {
    return this.#count >= RECENT_WINDOW;
  }
}

export class AdaptiveLimit {
  readonly #options: Required<AdaptiveLimitOptions>;
  #limit: number;
  #lastCut = Number.NEGATIVE_INFINITY;
  #backlogMs = 0;
  readonly #recent = new Average(RECENT_WINDOW);
  readonly #long = new Average(LONG_WINDOW);
  /** Why the last cut happened, for the metrics and the tests. */
  lastCutReason: 'latency' | 'backlog' | undefined;

  constructor(options: AdaptiveLimitOptions) {
    this.#options = {
      tolerance: 2,
      backoffRatio: 0.9,
      cooldownMs: 250,
      now: () => performance.now(),
      ...options,
    };
    // Start where the fixed limit would be: nothing is refused before there is a reason to.
    this.#limit = options.max;
  }

  /** Requests admitted at once now. */
  get limit(): number {
    return Math.floor(this.#limit);
  }

  /**
   * The long-term average time of the admitted work (undefined until measured): the queue's
   * expected wait is reckoned with it, so that a pause, which the recent average follows at once,
   * does not refuse the requests that arrive during it; a lasting slowdown moves it within seconds.
   */
  get typicalMs(): number | undefined {
    return this.#long.value;
  }

  /** The age of the saga's oldest undecided order, as last read (sagaBacklog.ts). */
  backlog(ageMs: number): void {
    this.#backlogMs = ageMs;
    if (ageMs > this.#options.backlogBoundMs) this.#cut('backlog');
  }

  /** A request's database work took `ms`, with `inFlight` requests admitted when it ended. */
  sample(ms: number, inFlight: number): void {
    this.#recent.add(ms);
    this.#long.add(ms);
    const recent = this.#recent.value ?? ms;
    const long = this.#long.value ?? ms;
    if (this.#long.warm && recent > this.#options.tolerance * long) this.#cut('latency');
    else if (this.#backlogMs > this.#options.backlogBoundMs) this.#cut('backlog');
    // A limit that is not in use says nothing about whether a larger one would be served.
    else if (inFlight * 2 >= this.#limit)
      this.#limit = Math.min(this.#options.max, this.#limit + 1 / this.#limit);
  }

  #cut(reason: 'latency' | 'backlog'): void {
    const now = this.#options.now();
    if (now - this.#lastCut < this.#options.cooldownMs) return;
    this.#lastCut = now;
    this.lastCutReason = reason;
    this.#limit = Math.max(this.#options.min, this.#limit * this.#options.backoffRatio);
  }
}
