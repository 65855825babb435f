/** One run's figures: medians over rounds and the paired ratios between variants. */
import { median, quantile, round } from '../support/stats.ts';
import { params } from './params.ts';
import { type VariantKey, variants } from './variants.ts';

/** One round of the latency and the throughput measurement, as run.ts records them. */
export type LatencyRound = { round: number; variant: VariantKey; n: number; medianMs: number; p99Ms: number };
export type ThroughputRound = {
  round: number;
  variant: VariantKey;
  concurrency: number;
  n: number;
  elapsedMs: number;
  txPerSec: number;
  medianLatencyMs: number;
};

export type VariantLatency = { medianMs: number; p99Ms: number; pooledMedianMs: number };
export type RunSummary = {
  latency: Record<string, VariantLatency>;
  throughput: Record<string, Record<string, number>>; // concurrency -> variant -> median tx/s
  /** Paired per-round ratios, median over rounds (p99: ratio of the pooled p99s). */
  ratios: Record<string, number>;
};

/** The comparisons reported: [name, variant, baseline]. */
export const comparisons: [string, VariantKey, VariantKey][] = [
  ['B/A', 'B', 'A'], // outbox overhead, as production writes it
  ['R/A', 'R', 'A'], // cost of one more (empty) round trip
  ['B/R', 'B', 'R'], // the outbox INSERT beyond a bare round trip
  ['C/A', 'C', 'A'],
  ['B/C', 'B', 'C'], // cost of the NOTIFY trigger
  ['D/A', 'D', 'A'],
  ['D/B', 'D', 'B'], // cost of zod validation + trace injection
  ['E0/A', 'E0', 'A'],
  ['E1/E0', 'E1', 'E0'], // outbox overhead when the row rides in the business statement
  ['E1/A', 'E1', 'A'],
  ['E1/B', 'E1', 'B'],
  ['F1/F0', 'F1', 'F0'], // outbox overhead in today's production path
  ['F0/E0', 'F0', 'E0'], // the business write with pricing and key claim folded in
  ['F1/E1', 'F1', 'E1'], // today's production path vs the one until now
  ['F1K/E1K', 'F1K', 'E1K'], // the same, with an Idempotency-Key
  ['F1/A', 'F1', 'A'],
  ['F1/F1N', 'F1', 'F1N'], // the NOTIFY trigger in today's production path
  ['F1N/F0', 'F1N', 'F0'], // the outbox row without its NOTIFY
  ['F1/F1T', 'F1', 'F1T'], // the traceparent trigger CDC needs (migration 005), per outbox insert
];

export function summarizeRun(
  latencyRounds: LatencyRound[],
  throughputRounds: ThroughputRound[],
  pooled: Map<VariantKey, number[]>,
): RunSummary {
  const latency: Record<string, VariantLatency> = {};
  for (const variant of variants) {
    const rounds = latencyRounds.filter((x) => x.variant === variant.key);
    const samples = pooled.get(variant.key) ?? [];
    latency[variant.key] = {
      medianMs: round(median(rounds.map((x) => x.medianMs)), 4),
      p99Ms: round(quantile(samples, 0.99), 4),
      pooledMedianMs: round(median(samples), 4),
    };
  }
  const throughput: Record<string, Record<string, number>> = {};
  for (const concurrency of params.concurrency) {
    const perVariant: Record<string, number> = {};
    for (const variant of variants) {
      const rounds = throughputRounds.filter(
        (x) => x.variant === variant.key && x.concurrency === concurrency,
      );
      perVariant[variant.key] = round(median(rounds.map((x) => x.txPerSec)), 1);
    }
    throughput[concurrency] = perVariant;
  }
  const ratios: Record<string, number> = {};
  const has = (key: VariantKey) => variants.some((v) => v.key === key);
  for (const [name, x, y] of comparisons) {
    if (!has(x) || !has(y)) continue;
    const perRound = (metric: (round: number, key: VariantKey) => number | undefined) =>
      median(
        Array.from({ length: params.rounds }, (_, r) => {
          const num = metric(r, x);
          const den = metric(r, y);
          return num === undefined || den === undefined ? Number.NaN : num / den;
        }).filter((v) => !Number.isNaN(v)),
      );
    ratios[`latencyMedian ${name}`] = round(
      perRound((r, k) => latencyRounds.find((l) => l.round === r && l.variant === k)?.medianMs),
      4,
    );
    ratios[`latencyP99 ${name}`] = round(
      (latency[x]?.p99Ms ?? Number.NaN) / (latency[y]?.p99Ms ?? Number.NaN),
      4,
    );
    for (const concurrency of params.concurrency) {
      ratios[`throughput c=${concurrency} ${name}`] = round(
        perRound(
          (r, k) =>
            throughputRounds.find((t) => t.round === r && t.variant === k && t.concurrency === concurrency)
              ?.txPerSec,
        ),
        4,
      );
    }
  }
  return { latency, throughput, ratios };
}
