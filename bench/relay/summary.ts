/** One run's figures: medians over rounds and the paired ratios between variants. */
import { median, pairedRatio, round } from '../support/stats.ts';
import type { ClaimProbeCell, ClaimProbeRound } from './claimProbe.ts';
import type { LatencyRound } from './latency.ts';
import { params } from './params.ts';
import { type ThroughputRound, throughputComparisons, throughputVariants } from './throughputVariants.ts';

export type RunSummary = {
  /** Median events/s over rounds, per throughput variant. */
  eventsPerSec: Record<string, number>;
  /** Median over rounds of each variant's CPU seconds per 1,000 events, per process group. */
  cpuPer1000: Record<string, Record<string, number>>;
  /** Median over rounds of the machine's busy share while each variant ran. */
  machineBusy: Record<string, number>;
  /** Relay variants: median over rounds of the mean ms per claim / publish / mark step. */
  steps: Record<string, Record<string, number>>;
  /** Claim probe, per `query/stats`: median over rounds of events/s and of the mean claim ms. */
  claimProbe: Record<string, { eventsPerSec: number; meanClaimMs: number; maxClaimMs: number }>;
  /** Per cell `mode@rate`: median over rounds of p50/p99, and achieved rate. */
  latency: Record<
    string,
    {
      p50Ms: number;
      p99Ms: number;
      maxMs: number;
      achievedRate: number;
      claimsPerEvent: number;
      batchesPerEvent: number;
    }
  >;
  /** Paired per-round ratios, median over rounds. */
  ratios: Record<string, number>;
};

export function summarizeRun(
  throughput: ThroughputRound[],
  claimProbeRounds: ClaimProbeRound[],
  latency: LatencyRound[],
): RunSummary {
  const throughputSummary = summarizeThroughput(throughput);
  const claimProbe = summarizeClaimProbe(claimProbeRounds);
  const latencySummary = summarizeLatency(latency);
  return {
    eventsPerSec: throughputSummary.eventsPerSec,
    cpuPer1000: throughputSummary.cpuPer1000,
    machineBusy: throughputSummary.machineBusy,
    steps: throughputSummary.steps,
    claimProbe: claimProbe.claimProbe,
    latency: latencySummary.latency,
    ratios: { ...throughputSummary.ratios, ...claimProbe.ratios, ...latencySummary.ratios },
  };
}

function summarizeThroughput(
  throughput: ThroughputRound[],
): Pick<RunSummary, 'eventsPerSec' | 'cpuPer1000' | 'machineBusy' | 'steps' | 'ratios'> {
  const eventsPerSec: Record<string, number> = {};
  const cpuPer1000: Record<string, Record<string, number>> = {};
  const machineBusy: Record<string, number> = {};
  const steps: Record<string, Record<string, number>> = {};
  for (const variant of throughputVariants) {
    const rounds = throughput.filter((t) => t.variant === variant.key);
    if (rounds.length === 0) continue;
    if (variant.kind === 'relay') {
      const perStep: Record<string, number> = {};
      for (const key of Object.keys(rounds[0]?.steps ?? {}))
        perStep[key] = round(median(rounds.map((t) => t.steps?.[key] ?? Number.NaN)), 2);
      steps[variant.key] = perStep;
    }
    eventsPerSec[variant.key] = round(median(rounds.map((t) => t.eventsPerSec)), 1);
    machineBusy[variant.key] = round(median(rounds.map((t) => t.cpu.machineBusy)), 2);
    const groups: Record<string, number> = {};
    for (const group of Object.keys(rounds[0]?.cpu.seconds ?? {}))
      groups[group] = round(median(rounds.map((t) => ((t.cpu.seconds[group] ?? 0) * 1000) / t.events)), 3);
    cpuPer1000[variant.key] = groups;
  }
  const ratios: Record<string, number> = {};
  const tValue = (r: number, key: string) =>
    throughput.find((t) => t.round === r && t.variant === key)?.eventsPerSec;
  for (const [name, x, y] of throughputComparisons()) {
    if (!eventsPerSec[x] || !eventsPerSec[y]) continue;
    ratios[`throughput ${name}`] = pairedRatio(params.rounds, tValue, x, y).median;
  }
  return { eventsPerSec, cpuPer1000, machineBusy, steps, ratios };
}

function summarizeClaimProbe(claimProbeRounds: ClaimProbeRound[]): Pick<RunSummary, 'claimProbe' | 'ratios'> {
  const claimProbe: RunSummary['claimProbe'] = {};
  const ratios: Record<string, number> = {};
  const probeKey = (c: ClaimProbeCell) => `${c.query}/${c.stats}`;
  for (const key of [...new Set(claimProbeRounds.map(probeKey))]) {
    const rounds = claimProbeRounds.filter((c) => probeKey(c) === key);
    claimProbe[key] = {
      eventsPerSec: round(median(rounds.map((c) => c.eventsPerSec)), 1),
      meanClaimMs: round(median(rounds.map((c) => c.meanClaimMs)), 2),
      maxClaimMs: round(Math.max(...rounds.map((c) => c.maxClaimMs)), 2),
    };
  }
  const probeValue = (r: number, key: string) =>
    claimProbeRounds.find((c) => c.round === r && probeKey(c) === key)?.eventsPerSec;
  for (const [name, x, y] of [
    ['production stale/fresh', 'production/stale', 'production/fresh'],
    ['production/not-exists stale', 'production/stale', 'not-exists/stale'],
    ['production/not-exists fresh', 'production/fresh', 'not-exists/fresh'],
    ['not-exists stale/fresh', 'not-exists/stale', 'not-exists/fresh'],
  ] as const) {
    if (claimProbe[x] && claimProbe[y])
      ratios[`claim probe ${name}`] = pairedRatio(params.rounds, probeValue, x, y).median;
  }
  return { claimProbe, ratios };
}

function summarizeLatency(latency: LatencyRound[]): Pick<RunSummary, 'latency' | 'ratios'> {
  const summary: RunSummary['latency'] = {};
  const ratios: Record<string, number> = {};
  for (const rate of params.rates) {
    for (const mode of params.modes) {
      const rounds = latency.filter((l) => l.mode === mode && l.rate === rate);
      if (rounds.length === 0) continue;
      summary[`${mode}@${rate}`] = {
        p50Ms: round(median(rounds.map((l) => l.p50Ms)), 2),
        p99Ms: round(median(rounds.map((l) => l.p99Ms)), 2),
        maxMs: round(Math.max(...rounds.map((l) => l.maxMs)), 2),
        achievedRate: round(median(rounds.map((l) => l.achievedRate)), 1),
        claimsPerEvent: round(median(rounds.map((l) => l.claimsPerEvent)), 3),
        batchesPerEvent: round(median(rounds.map((l) => l.batchesPerEvent)), 3),
      };
    }
    for (const other of params.modes.filter((m) => m !== 'notify')) {
      if (!params.modes.includes('notify')) continue;
      for (const q of ['p50Ms', 'p99Ms'] as const) {
        const value = (r: number, key: string) =>
          latency.find((l) => l.round === r && l.rate === rate && l.mode === key)?.[q];
        ratios[`latency ${q.slice(0, 3)} notify/${other} @${rate}`] = pairedRatio(
          params.latencyRounds,
          value,
          'notify',
          other,
        ).median;
      }
    }
  }
  return { latency: summary, ratios };
}
