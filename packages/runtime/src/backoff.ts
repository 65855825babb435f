/**
 * The exponential schedule: `base` before the first retry, doubling with each attempt up to
 * `cap`. Attempt 0 (and below) waits like the first.
 */
export function exponentialDelayMs(attempt: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

/**
 * Exponential backoff with full jitter: a random delay in [0, min(cap, base * 2^(attempt-1))].
 * Full jitter spreads the retries of many relays after a shared outage instead of having them
 * hit the broker in lockstep (see the AWS Architecture Blog, "Exponential Backoff and Jitter").
 */
export function backoffDelayMs(attempt: number, baseMs = 200, capMs = 30_000, random = Math.random): number {
  return Math.floor(random() * exponentialDelayMs(attempt, baseMs, capMs));
}
