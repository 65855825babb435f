import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

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
  /** Added to every call, in milliseconds. */
  latencyMs: number;
};

/**
 * A simulated card processor with deterministic rules, so demos and tests can drive every saga
 * path: customers whose id starts with `declined` are declined, as are amounts above the limit;
 * everything else is authorized. Like a real provider it is idempotent per key (an answer is
 * remembered for the life of the process) and it can be made slow or flaky.
 */
export class PaymentProvider {
  readonly #options: ProviderOptions;
  readonly #answers = new Map<string, Authorization>();
  readonly #voided = new Set<string>();

  constructor(options: ProviderOptions) {
    this.#options = options;
  }

  async authorize(request: AuthorizationRequest): Promise<Authorization> {
    await this.#call();
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
    await this.#call();
    this.#voided.add(authorizationId);
  }

  async #call(): Promise<void> {
    if (this.#options.latencyMs > 0) await sleep(this.#options.latencyMs);
    if (Math.random() < this.#options.faultRate)
      throw new PaymentProviderUnavailable('payment provider unavailable');
  }
}

/** Deterministic per idempotency key, so a retried authorization gets the same reference. */
function authorizationIdFor(idempotencyKey: string): string {
  return `auth_${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 20)}`;
}
