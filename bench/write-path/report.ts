/** The results file: what the report records, and its Markdown. */

import { markdownTableLinesOf } from '@outbox/devstack/table';
import type { RunHeader } from '../support/environment.ts';
import { perRunRatiosTable } from '../support/environment.ts';
import { type OverRuns, overRunsView } from '../support/runs.ts';
import { pct } from '../support/stats.ts';
import { params } from './params.ts';
import type { RunResult } from './run.ts';
import { comparisons } from './summary.ts';
import { variants } from './variants.ts';

export function markdownReport(result: Report): string {
  const { last, ratio, runsNote } = overRunsView(
    result,
    'single run (use --runs 3 for a median over runs)',
    'median of the per-run ratios',
  );
  const perConcurrency = <Row>(head: string, cell: (row: Row, c: number) => string) =>
    Object.fromEntries(
      params.concurrency.map((c) => [head.replace('c', `c=${c}`), (row: Row) => cell(row, c)]),
    );
  return [
    '# Write-path benchmark results',
    '',
    `${result.date} · ${result.machine.cpuModel} × ${result.machine.cpus} · Node ${result.node} · ${result.postgres.version} (synchronous_commit=${result.postgres.synchronous_commit}, fsync=${result.postgres.fsync}) · Prisma pool ${params.prismaPoolSize}`,
    '',
    `Load average (1, 5, 15 min) per run, before → after: ${result.runs.map((r) => `${r.loadavgBefore.join(' ')} → ${r.loadavgAfter.join(' ')}`).join('; ')}.`,
    '',
    `Parameters: ${params.runs} run(s) × ${params.rounds} rounds; per round and variant ${params.iterations} tx at c=1 and ${params.txPerThroughputRound} tx at each c in {${params.concurrency.join(', ')}}; warm-up ${params.warmup}.`,
    '',
    `## Ratios vs baseline (${runsNote})`,
    '',
    ...markdownTableLinesOf(
      comparisons.filter(([name]) => ratio(`latencyMedian ${name}`) !== undefined),
      {
        comparison: ([name]) => name,
        'c=1 median latency': ([name]) => pct(ratio(`latencyMedian ${name}`)),
        'c=1 p99 latency': ([name]) => pct(ratio(`latencyP99 ${name}`)),
        ...perConcurrency('c throughput', ([name], c) => pct(ratio(`throughput c=${c} ${name}`))),
      },
    ),
    '',
    'Latency: + means slower. Throughput: − means fewer transactions per second.',
    '',
    `## Absolute figures (run ${last.run} of ${result.runs.length}: median over rounds; p99 pooled over ${params.rounds * params.iterations} tx)`,
    '',
    ...markdownTableLinesOf(variants, {
      variant: (v) => `${v.key}: ${v.label}`,
      'statements/tx (counted)': (v) => `${v.roundTrips} (${last.statementsPerTx[v.key] ?? 'n/a'})`,
      'c=1 median ms': (v) => last.summary.latency[v.key]?.medianMs.toFixed(2) ?? 'n/a',
      'c=1 p99 ms': (v) => last.summary.latency[v.key]?.p99Ms.toFixed(2) ?? 'n/a',
      ...perConcurrency('c tx/s', (v, c) => last.summary.throughput[c]?.[v.key]?.toFixed(0) ?? 'n/a'),
    }),
    ...(result.runs.length > 1 ? ['', '## Per-run ratios', '', ...perRunRatiosTable(result.acrossRuns)] : []),
    '',
  ].join('\n');
}

export type Report = RunHeader & {
  benchmark: 'write-path';
  parameters: typeof params;
  variants: { key: string; label: string; statementsPerTx: number; notifyTrigger: boolean }[];
} & OverRuns<RunResult>;
