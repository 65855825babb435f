/** Small statistics helpers shared by the benchmarks (nearest-rank quantiles, medians, ratios). */

export const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

/** Nearest-rank quantile; NaN for an empty sample. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
}

export function median(xs: number[]): number {
  const values = xs.filter((x) => !Number.isNaN(x));
  if (values.length === 0) return Number.NaN;
  const s = sorted(values);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export const round = (x: number, digits = 3) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : x);

/** A ratio as a signed percentage (1.25 → "+25.0%"); "n/a" when missing. */
export const pct = (ratio: number | undefined) =>
  ratio === undefined || Number.isNaN(ratio)
    ? 'n/a'
    : `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;

/** A ratio as "0.62×"; "n/a" when missing. */
export const times = (ratio: number | undefined, digits = 2) =>
  ratio === undefined || Number.isNaN(ratio) ? 'n/a' : `${ratio.toFixed(digits)}×`;

/**
 * Paired ratio: for every round where both values exist, value(x) / value(y); then the median over
 * rounds. Pairing within a round cancels most of the machine's drift between rounds.
 */
export function pairedRatio(
  rounds: number,
  value: (round: number, key: string) => number | undefined,
  x: string,
  y: string,
): { median: number; perRound: number[] } {
  const perRound: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const num = value(r, x);
    const den = value(r, y);
    if (num === undefined || den === undefined || Number.isNaN(num) || Number.isNaN(den) || den === 0)
      continue;
    perRound.push(round(num / den, 4));
  }
  return { median: round(median(perRound), 4), perRound };
}

/** One variant's timed measurement in one round, as a results file records it. */
export type TimedCell = { round: number; variant: string } & ReturnType<typeof timed>;

/** `events` measured over `elapsedMs`: both as a results file records them. */
export const timed = (events: number, elapsedMs: number) => ({
  events,
  elapsedMs: round(elapsedMs, 1),
  eventsPerSec: round((events / elapsedMs) * 1000, 1),
});

/** Rotate `items` by `round`, so no variant always runs first (or always right after another). */
export const rotated = <T>(items: T[], round: number): T[] =>
  items.map((_, i) => items[(i + round) % items.length] as T);

/** Median over runs of each per-run ratio. */
export function acrossRuns(
  perRun: Record<string, number>[],
): Record<string, { median: number; perRun: number[] }> {
  const out: Record<string, { median: number; perRun: number[] }> = {};
  for (const name of Object.keys(perRun[0] ?? {})) {
    const values = perRun.map((r) => r[name] ?? Number.NaN);
    out[name] = { median: round(median(values), 4), perRun: values };
  }
  return out;
}
