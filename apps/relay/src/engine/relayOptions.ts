// How a relay claims: its settings (validated in config.ts) and the size of its next claim.

export type RelayOptions = {
  id: string;
  /** The largest batch; under a backlog the claim grows to it (see nextClaimSize). */
  batchSize: number;
  /** The smallest claim, when the outbox is quiet; defaults to batchSize (no adapting). */
  minBatchSize?: number;
  leaseMs: number;
  pollIntervalMs: number;
  /** How long an idle relay waits after a wake-up before it claims (relay.ts #idle); default 0. */
  lingerMs?: number;
  /**
   * How long an idle relay keeps an acknowledged batch's mark for its next claim, to send both as
   * one statement (relay.ts #idle, marksWithNextClaim); default 0, marked at once.
   */
  markWithNextClaimMs?: number;
  /** Attempts before a transiently failing event is dead-lettered. */
  maxAttempts: number;
};

/**
 * Claim size adapts to the traffic: twice what the last claim found, between the minimum and
 * the maximum. Quiet, claims stay small, so each batch goes out (and is acknowledged) at once;
 * under a backlog they double up to the maximum within a few claims, which is what throughput
 * needs. Figures in docs/benchmarks.md (relay).
 */
export function nextClaimSize(options: RelayOptions, lastClaimed: number): number {
  const { batchSize, minBatchSize = batchSize } = options;
  return Math.min(batchSize, Math.max(minBatchSize, lastClaimed * 2));
}

/**
 * Whether a batch that did not fill its claim keeps its mark for the next claim (relay.ts #idle):
 * only while batches come within markWithNextClaimMs of each other (`sinceLastBatchMs`: from the
 * claim that found the previous batch to the one that found this), so that the next wake-up is
 * likely to come within the bound too. A lone event, or a quiet outbox's, is marked at once: its
 * mark would go alone after the whole bound anyway, saving nothing, and the outbox would show it
 * in flight that much longer.
 */
export function marksWithNextClaim(options: RelayOptions, sinceLastBatchMs: number): boolean {
  const { markWithNextClaimMs = 0 } = options;
  return markWithNextClaimMs > 0 && sinceLastBatchMs <= markWithNextClaimMs;
}
