export type LatencySummary = { p50: number; p95: number; p99: number; max: number; count: number };

/**
 * Nearest-rank percentile: the smallest value such that at least q of all values are ≤ it. It is
 * always a value that was actually measured (no interpolation between two orders' latencies).
 * `sorted` must be in ascending order; NaN for an empty list.
 */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1] as number;
}

/** p50/p95/p99/max of some latencies; all 0 with count 0 when there are none (JSON has no NaN). */
export function summarizeLatencies(values: readonly number[]): LatencySummary {
  if (values.length === 0) return { p50: 0, p95: 0, p99: 0, max: 0, count: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] as number,
    count: sorted.length,
  };
}
