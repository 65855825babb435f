import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import { Counter, Gauge } from 'prom-client';

/**
 * Bounded admission in front of the API's database work. Past capacity, a request that waits for
 * a transaction slot or a pooled connection holds its client for seconds and then fails anyway,
 * while the ones behind it pile up: throughput collapses instead of levelling off. Here at most
 * `limit` requests do their database work at once, at most `queueLength` wait for a slot, none
 * longer than `queueTimeoutMs`; any other is refused at once with `Overloaded`, which the API
 * answers 503 + Retry-After (http/problem.ts). Sizing: docs/production.md, "Overload".
 */
export type AdmissionOptions = {
  /** Requests in their database work at once; fewer than the connection pool holds. */
  limit: number;
  /** Requests waiting for a slot at most; 0 refuses every request that finds all slots taken. */
  queueLength: number;
  /** The longest a request waits for a slot before it is refused. */
  queueTimeoutMs: number;
  /** What the 503 tells the client to wait before sending the request again. */
  retryAfterSeconds: number;
};

export type ShedReason = 'queue_full' | 'queue_timeout';

/** Refused before any database work: nothing was written, the same request may be sent again later. */
export class Overloaded extends Error {
  readonly code = 'OVERLOADED';
  readonly reason: ShedReason;
  readonly retryAfterSeconds: number;

  constructor(reason: ShedReason, retryAfterSeconds: number) {
    super(
      reason === 'queue_full'
        ? 'every admission slot is taken and the queue is full'
        : 'no admission slot came free in time',
    );
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
  readonly #shed: Counter<'reason'> | undefined;

  /** With `registry`, the admissions in flight and queued and the requests shed are exported there. */
  constructor(options: AdmissionOptions, registry?: MetricsRegistry) {
    this.options = options;
    if (!registry) return;
    this.#shed = new Counter({
      name: 'http_admission_shed_total',
      help: 'Requests refused with 503 overloaded before any database work, by reason (queue_full, queue_timeout).',
      labelNames: ['reason'],
      registers: [registry],
    });
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
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** Run `work` in an admission slot, or throw `Overloaded` without running it. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.#acquire();
    try {
      return await work();
    } finally {
      this.#release();
    }
  }

  #acquire(): Promise<void> {
    if (this.#inFlight < this.options.limit && this.#queue.length === 0) {
      this.#inFlight++;
      return Promise.resolve();
    }
    if (this.#queue.length >= this.options.queueLength) return Promise.reject(this.#refuse('queue_full'));
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

  /** The slot goes to the longest waiter, if any: first come, first served. */
  #release(): void {
    const next = this.#queue.shift();
    if (!next) {
      this.#inFlight--;
      return;
    }
    clearTimeout(next.timer);
    next.admit();
  }

  #refuse(reason: ShedReason): Overloaded {
    this.#shed?.inc({ reason });
    return new Overloaded(reason, this.options.retryAfterSeconds);
  }
}
