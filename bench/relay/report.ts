/** The results file: what the report records, and its Markdown. */

import { markdownTableLines, markdownTableLinesOf } from '@outbox/devstack/table';
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
  const lines: string[] = ['# Relay throughput and latency results', ''];
  lines.push(
    `${result.date} · ${result.machine.cpuModel} × ${result.machine.cpus} · Node ${result.node} · ${result.postgres.version} (synchronous_commit=${result.postgres.synchronous_commit}) · Kafka ${result.kafka.version} (${result.kafka.broker})`,
    '',
    `Parameters: ${params.runs} run(s); throughput ${params.rounds} rounds × ${params.events} events over ${params.aggregates} aggregates, batch ${params.batchSize}, ${params.topicPartitions} partitions; latency ${params.latencyRounds} rounds × ${params.latencySeconds} s per cell, ${params.txPerSec} transactions/s.`,
    '',
  );
  if (params.throughput) lines.push(...throughputSection(context));
  if (params.claimProbe) lines.push(...claimProbeSection(context));
  if (params.latency) lines.push(...latencySection(context));
  if (result.runs.length > 1) {
    lines.push('## Per-run ratios', '');
    lines.push(...perRunRatiosTable(result.acrossRuns), '');
  }
  lines.push(`Anchors: ${Object.values(anchors).join('; ')}.`, '');
  return lines.join('\n');
}

/** The throughput table, the relays' steps and the ratios. */
function throughputSection({ last, ratio, runsNote }: Context): string[] {
  const lines: string[] = [];
  lines.push(
    `## Throughput (run ${last.run}: median over rounds)`,
    '',
    `Backlog of ${params.events} events committed at once into an outbox holding ${params.history} published rows; fresh = ANALYZE in the backlog's transaction, stale = statistics of the drained outbox.`,
    '',
  );
  const rows = throughputVariants.map((v) => {
    const cpu = last.summary.cpuPer1000[v.key] ?? {};
    return [
      `${v.key}: ${v.label}`,
      last.summary.eventsPerSec[v.key]?.toFixed(0) ?? 'n/a',
      times(ratio(`throughput ${v.key}/P1`) ?? (v.key === 'P1' ? 1 : undefined)),
      Object.entries(cpu)
        .map(([group, s]) => `${group} ${s.toFixed(2)}`)
        .join(', '),
      `${((last.summary.machineBusy[v.key] ?? Number.NaN) * 100).toFixed(0)}%`,
    ];
  });
  lines.push(
    ...markdownTableLines(['variant', 'events/s', '÷ P1', 'CPU s per 1,000 events', 'machine busy'], rows),
    '',
    'Relay steps, mean ms per call over all relays (claims that found nothing included):',
    '',
    ...markdownTableLines(
      ['variant', 'claim ms', 'publish ms', 'mark ms', 'batches', 'claim plan (first round)'],
      throughputVariants
        .filter((v) => v.kind === 'relay')
        .map((v) => {
          const st = last.summary.steps[v.key] ?? {};
          const plan = last.throughputRounds.find((t) => t.variant === v.key)?.claimPlan ?? 'n/a';
          return [
            v.key,
            String(st.claimMs),
            String(st.publishMs),
            String(st.markMs),
            String(st.batches),
            plan,
          ];
        }),
    ),
    '',
    `Ratios (${runsNote}):`,
    '',
  );
  lines.push(
    ...markdownTableLines(
      ['ratio', 'value'],
      throughputComparisons()
        .filter(([name]) => ratio(`throughput ${name}`) !== undefined)
        .map(([name]) => [name, times(ratio(`throughput ${name}`))]),
    ),
    '',
  );
  return lines;
}

/** The claim probe's table and ratios. */
function claimProbeSection({ result, last, ratio }: Context): string[] {
  const lines: string[] = [];
  lines.push(
    `## Claim statement alone (run ${last.run}: median over rounds)`,
    '',
    `One connection drains a backlog of ${params.claimProbeEvents} events with claim + markPublished, no Kafka. production = claimBatch (\`o.seq = (select min(seq) … status <> 'published')\`); not-exists = the NOT EXISTS form it replaced.`,
    '',
    ...markdownTableLines(
      ['query / statistics', 'events/s', 'mean claim ms', 'max claim ms'],
      Object.entries(last.summary.claimProbe).map(([key, v]) => [
        key,
        v.eventsPerSec.toFixed(0),
        v.meanClaimMs.toFixed(1),
        v.maxClaimMs.toFixed(1),
      ]),
    ),
    '',
    ...markdownTableLinesOf(
      Object.keys(result.acrossRuns).filter((k) => k.startsWith('claim probe')),
      {
        'ratio (events/s)': (name) => name.replace('claim probe ', ''),
        value: (name) => times(ratio(name)),
      },
    ),
    '',
  );
  return lines;
}

/** The latency cells and their paired ratios. */
function latencySection({ result, last, ratio, runsNote }: Context): string[] {
  const lines: string[] = [];
  lines.push(
    `## Commit-to-ack latency, one relay (run ${last.run}: median over rounds of each round's percentile)`,
    '',
  );
  const rows: string[][] = [];
  for (const rate of params.rates)
    for (const mode of params.modes) {
      const cell = last.summary.latency[`${mode}@${rate}`];
      if (!cell) continue;
      rows.push([
        `${rate}/s`,
        modeInfo[mode].label,
        cell.achievedRate.toFixed(0),
        cell.p50Ms.toFixed(1),
        cell.p99Ms.toFixed(1),
        cell.maxMs.toFixed(1),
        cell.claimsPerEvent.toFixed(2),
        cell.batchesPerEvent.toFixed(2),
      ]);
    }
  lines.push(
    ...markdownTableLines(
      [
        'offered',
        'mode',
        'achieved/s',
        'p50 ms',
        'p99 ms',
        'max ms',
        'claims per event',
        'batches per event',
      ],
      rows,
    ),
    '',
  );
  const latencyRatios = Object.keys(result.acrossRuns).filter((k) => k.startsWith('latency'));
  if (latencyRatios.length > 0)
    lines.push(
      `Paired ratios (${runsNote}):`,
      '',
      ...markdownTableLinesOf(latencyRatios, {
        ratio: (name) => name.replace('latency ', ''),
        value: (name) => times(ratio(name), 3),
      }),
      '',
    );
  return lines;
}
