import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import { Counter, Gauge, Histogram } from 'prom-client';
import { AdaptiveLimit } from './adaptiveLimit.ts';

/**
 * Bounded admission in front of the API's database work. Past capacity, a request that waits for
 * a transaction slot or a pooled connection holds its client for seconds and then fails anyway,
 * while the ones behind it pile up: throughput collapses instead of levelling off. Here at most
 * `limit` requests do their database work at once, at most `queueLength` wait for a slot, none
 * longer than `queueTimeoutMs`; any other is refused at once with `Overloaded`, which the API
 * answers 503 + Retry-After (http/problem.ts). Sizing: docs/production.md, "Overload".
 *
 * With `adaptive`, `limit` is the most the limit may grow to: the limit itself follows the latency
 * of the work and the saga's backlog (adaptiveLimit.ts), and a request that finds every slot taken
 * joins the queue only if its expected wait (its place in the queue times the typical time of the
 * work, over the limit) is within `expectedWaitMs`; otherwise it is refused on arrival. A refusal
 * is then immediate, and a pause (a GC, a checkpoint) is waited out by the queue rather than shed:
 * the typical time is the long-term average, which a pause hardly moves (the recent one cuts the
 * limit instead, adaptiveLimit.ts).
 */
export type AdmissionOptions = {
  /** Requests in their database work at once (adaptive: at most); fewer than the connection pool holds. */
  limit: number;
  /** Requests waiting for a slot at most; 0 refuses every request that finds all slots taken. */
  queueLength: number;
  /** The longest a request waits for a slot before it is refused. */
  queueTimeoutMs: number;
  /** What the 503 tells the client to wait before sending the request again. */
  retryAfterSeconds: number;
  adaptive?: {
    /** The fewest requests admitted at once, however far the saga falls behind. */
    minLimit: number;
    /** A request joins the queue only if it should get a slot within this long. */
    expectedWaitMs: number;
    /** The saga's oldest undecided order may be this old before the limit shrinks. */
    sagaBacklogMs: number;
  };
};

/** The age of the saga's oldest undecided order, as last read (saga/sagaBacklog.ts). */
export type BacklogReader = { ageMs(): number | undefined };

export type ShedReason = 'queue_full' | 'queue_timeout' | 'expected_wait';

const MESSAGES: Record<ShedReason, string> = {
  queue_full: 'every admission slot is taken and the queue is full',
  queue_timeout: 'no admission slot came free in time',
  expected_wait: 'every admission slot is taken and the queue would not reach this request in time',
};

/** Refused before any database work: nothing was written, the same request may be sent again later. */
export class Overloaded extends Error {
  readonly code = 'OVERLOADED';
  readonly reason: ShedReason;
  readonly retryAfterSeconds: number;

  constructor(reason: ShedReason, retryAfterSeconds: number) {
    super(MESSAGES[reason]);
    this.name = 'Overloaded';
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

type Waiter = { admit: () => void; timer: NodeJS.Timeout };

export class Admission {
  readonly options: AdmissionOptions;
  #inFlight = 0;
  readonly #queue: Waiter[] = [];
  readonly #shed: { count: Counter<'reason'>; seconds: Histogram } | undefined;
  readonly #adaptive: AdaptiveLimit | undefined;
  readonly #backlog: BacklogReader | undefined;
  readonly #now: () => number;
  /** When a slot last came free, or a request last took a free one. */
  #lastProgress = 0;

  /**
   * With `registry`, the admissions in flight and queued, the limit and the requests shed are
   * exported there; with `backlog` (and `options.adaptive`), the saga's backlog moves the limit.
   */
  constructor(
    options: AdmissionOptions,
    registry?: MetricsRegistry,
    backlog?: BacklogReader,
    now?: () => number,
  ) {
    this.options = options;
    this.#backlog = backlog;
    this.#now = now ?? (() => performance.now());
    if (options.adaptive)
      this.#adaptive = new AdaptiveLimit({
        min: Math.min(options.adaptive.minLimit, options.limit),
        max: options.limit,
        backlogBoundMs: options.adaptive.sagaBacklogMs,
        now: this.#now,
      });
    if (registry) this.#shed = this.#register(registry);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** Requests admitted at once now: the fixed limit, or where the adaptive one stands. */
  get limit(): number {
    return this.#adaptive?.limit ?? this.options.limit;
  }

  /**
   * Run `work` in an admission slot, or throw `Overloaded` without running it. `arrivedAt`
   * (performance.now() when the request arrived) times a refusal from the request's arrival.
   */
  async run<T>(work: () => Promise<T>, arrivedAt?: number): Promise<T> {
    const asked = performance.now();
    try {
      await this.#acquire();
    } catch (err) {
      this.#observeRefusal(arrivedAt ?? asked);
      throw err;
    }
    const started = this.#now();
    try {
      return await work();
    } finally {
      this.#release(this.#now() - started);
    }
  }

  /**
   * The refusal a request arriving now meets, counted, or undefined if it would take a slot or join
   * the queue. Asked before a request is read (frontDoor.ts), it spares a request that would be
   * refused anyway the parsing and validation of its body: past capacity, that work would be taken
   * from the requests being served. `arrivedAt` as for `run`.
   */
  shedOnArrival(arrivedAt: number): ShedReason | undefined {
    const reason = this.#refusal();
    if (reason === undefined) return undefined;
    this.#observeRefusal(arrivedAt);
    this.#shed?.count.inc({ reason });
    return reason;
  }

  /** Whether a request arriving now would be refused on arrival; nothing is counted. */
  wouldRefuseOnArrival(): boolean {
    return this.#refusal() !== undefined;
  }

  /** Why a request arriving now would be refused at once, if it would. */
  #refusal(): ShedReason | undefined {
    if (this.#inFlight < this.limit && this.#queue.length === 0) return undefined;
    if (this.#queue.length >= this.options.queueLength) return 'queue_full';
    if (this.#expectedWaitMs() > (this.options.adaptive?.expectedWaitMs ?? Number.POSITIVE_INFINITY))
      return 'expected_wait';
    return undefined;
  }

  #acquire(): Promise<void> {
    if (this.#inFlight < this.limit && this.#queue.length === 0) {
      // A slot was free until now: a stall is counted from when the last slot was taken, not from
      // when a request still running (a slow one on an otherwise idle API) was admitted.
      this.#lastProgress = this.#now();
      this.#inFlight++;
      return Promise.resolve();
    }
    const refusal = this.#refusal();
    if (refusal) return Promise.reject(this.#refuse(refusal));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        admit: resolve,
        timer: setTimeout(() => {
          this.#queue.splice(this.#queue.indexOf(waiter), 1);
          reject(this.#refuse('queue_timeout'));
        }, this.options.queueTimeoutMs),
      };
      this.#queue.push(waiter);
    });
  }

  /**
   * How long a request joining the queue now should wait for a slot: the slots free up at about
   * `limit` per typical time of the work (Little's law), and the queue ahead goes first. Once every
   * slot has been taken, and none has come free, for as long as a queued request may wait (a stall:
   * a lock, a database that stopped answering), a newcomer would only be refused later: it is
   * refused on arrival instead.
   */
  #expectedWaitMs(): number {
    if (this.#now() - this.#lastProgress > this.options.queueTimeoutMs) return Number.POSITIVE_INFINITY;
    return ((this.#queue.length + 1) * (this.#adaptive?.typicalMs ?? 0)) / Math.max(1, this.limit);
  }

  /** The freed slot goes to the longest waiter, if the limit (which may have moved) allows it. */
  #release(workMs: number): void {
    this.#inFlight--;
    this.#lastProgress = this.#now();
    if (this.#adaptive) {
      const backlogMs = this.#backlog?.ageMs();
      if (backlogMs !== undefined) this.#adaptive.backlog(backlogMs);
      this.#adaptive.sample(workMs, this.#inFlight + 1);
    }
    while (this.#inFlight < this.limit) {
      const next = this.#queue.shift();
      if (!next) return;
      clearTimeout(next.timer);
      this.#inFlight++;
      next.admit();
    }
  }

  #observeRefusal(arrivedAt: number): void {
    this.#shed?.seconds.observe((performance.now() - arrivedAt) / 1000);
  }

  #refuse(reason: ShedReason): Overloaded {
    this.#shed?.count.inc({ reason });
    return new Overloaded(reason, this.options.retryAfterSeconds);
  }

  #register(registry: MetricsRegistry): { count: Counter<'reason'>; seconds: Histogram } {
    const admission = this;
    new Gauge({
      name: 'http_admission_requests',
      help: 'Requests admitted to their database work (state in_flight) and waiting for a slot (state queued).',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        this.set({ state: 'in_flight' }, admission.inFlight);
        this.set({ state: 'queued' }, admission.queued);
      },
    });
    new Gauge({
      name: 'http_admission_limit',
      help: 'Requests admitted to their database work at once at most, now (the adaptive limit moves).',
      registers: [registry],
      collect() {
        this.set(admission.limit);
      },
    });
    const count = new Counter({
      name: 'http_admission_shed_total',
      help: 'Requests refused with 503 overloaded before any database work, by reason (queue_full, queue_timeout, expected_wait).',
      labelNames: ['reason'],
      registers: [registry],
    });
    const seconds = new Histogram({
      name: 'http_admission_refusal_seconds',
      help: "Time from a refused request's arrival to its refusal by the admission limit (the API's clock).",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    });
    return { count, seconds };
  }
}
