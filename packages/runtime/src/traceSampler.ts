import {
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
} from '@opentelemetry/sdk-trace';
import { z } from 'zod';

/**
 * Which traces are recorded (docs/tracing.md, "Sampling: bounded cost under load"). Head sampling,
 * decided once where a trace starts (in practice orders' `POST /orders`) and carried by the W3C
 * traceparent's sampled flag everywhere after it: through the outbox row, the relay's publish and
 * every consumer. One order's trace is then whole in all six processes, or recorded in none.
 *
 * The root decision is a rate, not a ratio: at most N new traces a second per process, so a human
 * clicking through the demo sees every order traced, and a load test costs at most N traces a
 * second however many orders it sends. OpenTelemetry JS ships no rate-limiting sampler in the
 * packages this repository uses (only always-on/off, trace-id ratio and parent-based), hence this
 * one.
 */

/** Our variable is not OTEL_-prefixed: that namespace is the specification's. */
export const TRACES_PER_SECOND_VARIABLE = 'TRACING_MAX_TRACES_PER_SECOND';

/**
 * Enough that the demo and the tests (a few orders a second) trace every order, with room for the
 * console's reads, each its own one-span trace; few enough that near capacity the 11 spans of an
 * order are paid by 20 orders a second, not by all of them.
 */
export const DEFAULT_TRACES_PER_SECOND = 20;

export const samplingConfigSchema = z.object({
  /** Set: the SDK's standard samplers (OTEL_TRACES_SAMPLER/_ARG) apply, and ours does not. */
  OTEL_TRACES_SAMPLER: z.string().trim().optional(),
  [TRACES_PER_SECOND_VARIABLE]: z.coerce
    .number({ error: 'expected a positive number of traces a second, such as 20 or 0.5' })
    .positive('expected a positive number of traces a second, such as 20 or 0.5')
    .finite()
    .default(DEFAULT_TRACES_PER_SECOND),
});

export type SamplingConfig = z.output<typeof samplingConfigSchema>;

/**
 * The sampler to give the SDK, or undefined to leave it to the standard OTEL_TRACES_SAMPLER (the
 * SDK reads that variable only when it is given no sampler).
 */
export function samplerFor(config: SamplingConfig): Sampler | undefined {
  if (config.OTEL_TRACES_SAMPLER) return undefined;
  return rateLimitedSampler(config[TRACES_PER_SECOND_VARIABLE]);
}

/**
 * ParentBased: a span with a parent follows the parent's sampled flag (local or remote, so an
 * unsampled order's publish and process spans are not recorded either, yet still pass its context
 * on); a span without one starts a trace, and is sampled while the rate allows.
 */
export function rateLimitedSampler(perSecond: number, now: () => number = () => performance.now()): Sampler {
  return new ParentBasedSampler({ root: new RateLimitedRootSampler(perSecond, now) });
}

/**
 * A token bucket: full (a burst of N, at least one) at start, refilled continuously at N a second,
 * one token per sampled trace. `now` is in milliseconds, monotonic; tests pass their own clock.
 */
class RateLimitedRootSampler implements Sampler {
  private readonly perSecond: number;
  private readonly now: () => number;
  private readonly capacity: number;
  private tokens: number;
  private refilledAt: number;

  constructor(perSecond: number, now: () => number) {
    this.perSecond = perSecond;
    this.now = now;
    // Below one a second the bucket must still hold a whole token, or nothing would ever pass.
    this.capacity = Math.max(1, perSecond);
    this.tokens = this.capacity;
    this.refilledAt = now();
  }

  shouldSample(): SamplingResult {
    const at = this.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((at - this.refilledAt) / 1000) * this.perSecond);
    this.refilledAt = at;
    if (this.tokens < 1) return { decision: SamplingDecision.NOT_RECORD };
    this.tokens -= 1;
    return { decision: SamplingDecision.RECORD_AND_SAMPLED };
  }

  toString(): string {
    return `RateLimitedRootSampler{${this.perSecond}/s}`;
  }
}
