/** The results file: what the report records, and its Markdown. */

import { markdownTableLinesOf } from '@outbox/devstack/table';
import type { RunHeader } from '../support/environment.ts';
import { perRunRatiosTable } from '../support/environment.ts';
import { type OverRuns, overRunsView, type RunStamp } from '../support/runs.ts';
import { times } from '../support/stats.ts';
import type { ClaimProbeRound } from './claimProbe.ts';
import type { LatencyRound } from './latency.ts';
import { modeInfo, params } from './params.ts';
import type { RunSummary } from './summary.ts';
import {
  type ThroughputRound,
  type ThroughputVariant,
  throughputComparisons,
  throughputVariants,
} from './throughputVariants.ts';

export type RunResult = {
  throughputRounds: ThroughputRound[];
  claimProbeRounds: ClaimProbeRound[];
  latencyRounds: LatencyRound[];
  summary: RunSummary;
};

export type Report = RunHeader & {
  benchmark: 'relay-throughput';
  kafka: { version: string; broker: string };
  parameters: typeof params;
  throughputVariants: ThroughputVariant[];
  latencyModes: typeof modeInfo;
  anchors: Record<string, string>;
} & OverRuns<RunResult>;

export const anchors = {
  oneRelay: '~5,000 events/s for one relay (JVM relays)',
  manyRelays: '14,000-18,000 events/s with many relays (JVM relays)',
  latency: 'single-digit-ms p50 commit-to-ack latency with NOTIFY',
};

/** What every section of the Markdown reads: the report, its last run, a ratio's median over runs. */
type Context = {
  result: Report;
  last: RunStamp & RunResult;
  ratio: (name: string) => number | undefined;
  runsNote: string;
};

export function markdownReport(result: Report): string {
  const view = overRunsView(
    result,
    'single run: median of the paired per-round ratios (use --runs 3 for a median over runs)',
  );
  const context: Context = { result, ...view };
  return [
    '# Relay throughput and latency results',
    '',
    `${result.date} · ${result.machine.cpuModel} × ${result.machine.cpus} · Node ${result.node} · ${result.postgres.version} (synchronous_commit=${result.postgres.synchronous_commit}) · Kafka ${result.kafka.version} (${result.kafka.broker})`,
    '',
    `Parameters: ${params.runs} run(s); throughput ${params.rounds} rounds × ${params.events} events over ${params.aggregates} aggregates, batch ${params.batchSize}, ${params.topicPartitions} partitions; latency ${params.latencyRounds} rounds × ${params.latencySeconds} s per cell, ${params.txPerSec} transactions/s.`,
    '',
    ...(params.throughput ? throughputSection(context) : []),
    ...(params.claimProbe ? claimProbeSection(context) : []),
    ...(params.latency ? latencySection(context) : []),
    ...(result.runs.length > 1 ? ['## Per-run ratios', '', ...perRunRatiosTable(result.acrossRuns), ''] : []),
    `Anchors: ${Object.values(anchors).join('; ')}.`,
    '',
  ].join('\n');
}

/** The throughput table, the relays' steps and the ratios. */
function throughputSection({ last, ratio, runsNote }: Context): string[] {
  const steps = (v: ThroughputVariant) => last.summary.steps[v.key] ?? {};
  return [
    `## Throughput (run ${last.run}: median over rounds)`,
    '',
    `Backlog of ${params.events} events committed at once into an outbox holding ${params.history} published rows; fresh = ANALYZE in the backlog's transaction, stale = statistics of the drained outbox.`,
    '',
    ...markdownTableLinesOf(throughputVariants, {
      variant: (v) => `${v.key}: ${v.label}`,
      'events/s': (v) => last.summary.eventsPerSec[v.key]?.toFixed(0) ?? 'n/a',
      '÷ P1': (v) => times(ratio(`throughput ${v.key}/P1`) ?? (v.key === 'P1' ? 1 : undefined)),
      'CPU s per 1,000 events': (v) =>
        Object.entries(last.summary.cpuPer1000[v.key] ?? {})
          .map(([group, s]) => `${group} ${s.toFixed(2)}`)
          .join(', '),
      'machine busy': (v) => `${((last.summary.machineBusy[v.key] ?? Number.NaN) * 100).toFixed(0)}%`,
    }),
    '',
    'Relay steps, mean ms per call over all relays (claims that found nothing included):',
    '',
    ...markdownTableLinesOf(
      throughputVariants.filter((v) => v.kind === 'relay'),
      {
        variant: (v) => v.key,
        'claim ms': (v) => steps(v).claimMs,
        'publish ms': (v) => steps(v).publishMs,
        'mark ms': (v) => steps(v).markMs,
        batches: (v) => steps(v).batches,
        'claim plan (first round)': (v) =>
          last.throughputRounds.find((t) => t.variant === v.key)?.claimPlan ?? 'n/a',
      },
    ),
    '',
    `Ratios (${runsNote}):`,
    '',
    ...markdownTableLinesOf(
      throughputComparisons().filter(([name]) => ratio(`throughput ${name}`) !== undefined),
      { ratio: ([name]) => name, value: ([name]) => times(ratio(`throughput ${name}`)) },
    ),
    '',
  ];
}

/** The claim probe's table and ratios. */
function claimProbeSection({ result, last, ratio }: Context): string[] {
  return [
    `## Claim statement alone (run ${last.run}: median over rounds)`,
    '',
    `One connection drains a backlog of ${params.claimProbeEvents} events with claim + markPublished, no Kafka. production = claimBatch (\`o.seq = (select min(seq) … status <> 'published')\`); not-exists = the NOT EXISTS form it replaced.`,
    '',
    ...markdownTableLinesOf(Object.entries(last.summary.claimProbe), {
      'query / statistics': ([key]) => key,
      'events/s': ([, v]) => v.eventsPerSec.toFixed(0),
      'mean claim ms': ([, v]) => v.meanClaimMs.toFixed(1),
      'max claim ms': ([, v]) => v.maxClaimMs.toFixed(1),
    }),
    '',
    ...markdownTableLinesOf(
      Object.keys(result.acrossRuns).filter((k) => k.startsWith('claim probe')),
      {
        'ratio (events/s)': (name) => name.replace('claim probe ', ''),
        value: (name) => times(ratio(name)),
      },
    ),
    '',
  ];
}

/** The latency cells and their paired ratios. */
function latencySection({ result, last, ratio, runsNote }: Context): string[] {
  const cells = params.rates.flatMap((rate) =>
    params.modes.flatMap((mode) => {
      const cell = last.summary.latency[`${mode}@${rate}`];
      return cell ? [{ rate, mode, ...cell }] : [];
    }),
  );
  const latencyRatios = Object.keys(result.acrossRuns).filter((k) => k.startsWith('latency'));
  return [
    `## Commit-to-ack latency, one relay (run ${last.run}: median over rounds of each round's percentile)`,
    '',
    ...markdownTableLinesOf(cells, {
      offered: (c) => `${c.rate}/s`,
      mode: (c) => modeInfo[c.mode].label,
      'achieved/s': (c) => c.achievedRate.toFixed(0),
      'p50 ms': (c) => c.p50Ms.toFixed(1),
      'p99 ms': (c) => c.p99Ms.toFixed(1),
      'max ms': (c) => c.maxMs.toFixed(1),
      'claims per event': (c) => c.claimsPerEvent.toFixed(2),
      'batches per event': (c) => c.batchesPerEvent.toFixed(2),
    }),
    '',
    ...(latencyRatios.length > 0
      ? [
          `Paired ratios (${runsNote}):`,
          '',
          ...markdownTableLinesOf(latencyRatios, {
            ratio: (name) => name.replace('latency ', ''),
            value: (name) => times(ratio(name), 3),
          }),
          '',
        ]
      : []),
  ];
}
