import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { BoundedMap } from './boundedMap.ts';

export type AuthorizationRequest = {
  /** The provider deduplicates on it: the same key always gets the same answer, charged once. */
  idempotencyKey: string;
  customerId: string;
  amountCents: bigint;
  currency: string;
};

export type Authorization =
  | { outcome: 'AUTHORIZED'; authorizationId: string }
  | { outcome: 'DECLINED'; reason: string };

/** A provider outage or timeout: the consumer retries the event later; nothing is decided. */
export class PaymentProviderUnavailable extends Error {
  readonly code = 'PAYMENT_PROVIDER_UNAVAILABLE';
}

export type ProviderOptions = {
  /** Authorizations above this amount (minor units) are declined. */
  limitCents: bigint;
  /** Share of calls (0..1) that fail as if the provider were down; for demos and tests. */
  faultRate: number;
  /** Draws in [0, 1) deciding which calls fail; default Math.random, `seededDraws` to repeat a run's faults. */
  draw?: () => number;
  /** Added to every call, in milliseconds. */
  latencyMs: number;
  /** A call that has not answered after this long fails as unavailable (and is retried); default 3 s. */
  timeoutMs?: number;
  /** How many idempotency keys (and voided authorizations) are remembered, oldest forgotten first; default 100,000. */
  remember?: number;
};

/**
 * A simulated card processor with deterministic rules, so demos and tests can drive every saga
 * path: customers whose id starts with `declined` are declined, as are amounts above the limit;
 * everything else is authorized. Like a real provider it is idempotent per key, remembers keys for
 * a bounded time (here: the last `remember` keys) and can be made slow or flaky. Its answers are
 * a function of the request, so a key it has forgotten still gets the same answer.
 */
export class PaymentProvider {
  readonly #options: Required<ProviderOptions>;
  readonly #answers: BoundedMap<string, Authorization>;
  readonly #voided: BoundedMap<string, true>;

  constructor(options: ProviderOptions) {
    this.#options = { timeoutMs: 3_000, remember: 100_000, draw: Math.random, ...options };
    this.#answers = new BoundedMap(this.#options.remember);
    this.#voided = new BoundedMap(this.#options.remember);
  }

  async authorize(request: AuthorizationRequest): Promise<Authorization> {
    await this.#call('authorize');
    const earlier = this.#answers.get(request.idempotencyKey);
    if (earlier) return earlier;
    const answer: Authorization = request.customerId.startsWith('declined')
      ? { outcome: 'DECLINED', reason: 'card declined by issuer' }
      : request.amountCents > this.#options.limitCents
        ? { outcome: 'DECLINED', reason: `amount above the limit of ${this.#options.limitCents} cents` }
        : { outcome: 'AUTHORIZED', authorizationId: authorizationIdFor(request.idempotencyKey) };
    this.#answers.set(request.idempotencyKey, answer);
    return answer;
  }

  /** Release an authorization. Voiding twice is fine. */
  async void(authorizationId: string): Promise<void> {
    await this.#call('void');
    this.#voided.set(authorizationId, true);
  }

  /** Keys and voids remembered now (bounded by `remember`). */
  get remembered(): number {
    return this.#answers.size + this.#voided.size;
  }

  async #call(what: string): Promise<void> {
    const { latencyMs, timeoutMs } = this.#options;
    if (latencyMs >= timeoutMs) {
      await sleep(timeoutMs);
      throw new PaymentProviderUnavailable(`payment provider: no answer to ${what} within ${timeoutMs} ms`);
    }
    if (latencyMs > 0) await sleep(latencyMs);
    if (this.#options.faultRate > 0 && this.#options.draw() < this.#options.faultRate)
      throw new PaymentProviderUnavailable('payment provider unavailable');
  }
}

/**
 * Draws that repeat for a seed: the n-th provider call of every run with the same seed fails or
 * not alike, so a test that needs a fault to happen can count on it instead of on chance.
 */
export function seededDraws(seed: string): () => number {
  let calls = 0;
  return () => createHash('sha256').update(`${seed}:${calls++}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** Deterministic per idempotency key, so a retried authorization gets the same reference. */
function authorizationIdFor(idempotencyKey: string): string {
  return `auth_${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 20)}`;
}
