/**
 * Exponential backoff with full jitter: a random delay in [0, min(cap, base * 2^(attempt-1))].
 * Full jitter spreads the retries of many relays after a shared outage instead of having them
 * hit the broker in lockstep (see the AWS Architecture Blog, "Exponential Backoff and Jitter").
 */
export function backoffDelayMs(attempt: number, baseMs = 200, capMs = 30_000, random = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}
