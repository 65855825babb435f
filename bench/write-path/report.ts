/** The results file: what the report records, and its Markdown. */

import { markdownTableLines } from '@outbox/devstack/table';
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
  const lines: string[] = [];
  lines.push('# Write-path benchmark results', '');
  lines.push(
    `${result.date} · ${result.machine.cpuModel} × ${result.machine.cpus} · Node ${result.node} · ${result.postgres.version} (synchronous_commit=${result.postgres.synchronous_commit}, fsync=${result.postgres.fsync}) · Prisma pool ${params.prismaPoolSize}`,
    '',
    `Load average (1, 5, 15 min) per run, before → after: ${result.runs.map((r) => `${r.loadavgBefore.join(' ')} → ${r.loadavgAfter.join(' ')}`).join('; ')}.`,
    '',
    `Parameters: ${params.runs} run(s) × ${params.rounds} rounds; per round and variant ${params.iterations} tx at c=1 and ${params.txPerThroughputRound} tx at each c in {${params.concurrency.join(', ')}}; warm-up ${params.warmup}.`,
    '',
  );
  lines.push(`## Ratios vs baseline (${runsNote})`, '');
  const header = ['comparison', 'c=1 median latency', 'c=1 p99 latency'];
  for (const c of params.concurrency) header.push(`c=${c} throughput`);
  const ratioRows = comparisons
    .filter(([name]) => ratio(`latencyMedian ${name}`) !== undefined)
    .map(([name]) => [
      name,
      pct(ratio(`latencyMedian ${name}`)),
      pct(ratio(`latencyP99 ${name}`)),
      ...params.concurrency.map((c) => pct(ratio(`throughput c=${c} ${name}`))),
    ]);
  lines.push(
    ...markdownTableLines(header, ratioRows),
    '',
    'Latency: + means slower. Throughput: − means fewer transactions per second.',
    '',
    `## Absolute figures (run ${last.run} of ${result.runs.length}: median over rounds; p99 pooled over ${params.rounds * params.iterations} tx)`,
    '',
  );
  const head2 = ['variant', 'statements/tx (counted)', 'c=1 median ms', 'c=1 p99 ms'];
  for (const c of params.concurrency) head2.push(`c=${c} tx/s`);
  const absoluteRows = variants.map((variant) => {
    const lat = last.summary.latency[variant.key];
    return [
      `${variant.key}: ${variant.label}`,
      `${variant.roundTrips} (${last.statementsPerTx[variant.key] ?? 'n/a'})`,
      lat?.medianMs.toFixed(2) ?? 'n/a',
      lat?.p99Ms.toFixed(2) ?? 'n/a',
      ...params.concurrency.map((c) => last.summary.throughput[c]?.[variant.key]?.toFixed(0) ?? 'n/a'),
    ];
  });
  lines.push(...markdownTableLines(head2, absoluteRows));
  if (result.runs.length > 1) {
    lines.push('', '## Per-run ratios', '', ...perRunRatiosTable(result.acrossRuns));
  }
  lines.push('');
  return lines.join('\n');
}

export type Report = RunHeader & {
  benchmark: 'write-path';
  parameters: typeof params;
  variants: { key: string; label: string; statementsPerTx: number; notifyTrigger: boolean }[];
} & OverRuns<RunResult>;
