/** The results file: what the report records, and its Markdown. */

import { markdownTableLinesOf } from '@outbox/devstack/table';
import type { RunHeader } from '../support/environment.ts';
import { perRunRatiosTable } from '../support/environment.ts';
import { type OverRuns, overRunsView } from '../support/runs.ts';
import { round, times } from '../support/stats.ts';
import type { Measurement } from './measure.ts';
import { params, type Variant, variants } from './params.ts';
import { comparisons, type RunSummary } from './summary.ts';

export type RunResult = { rounds: Measurement[]; summary: RunSummary };

export type Report = RunHeader & {
  benchmark: 'consumer-throughput';
  kafka: { version: string; broker: string };
  parameters: typeof params;
  variants: Variant[];
} & OverRuns<RunResult>;

export function markdownReport(result: Report): string {
  const { last, ratio, runsNote } = overRunsView(result, 'single run: median of the paired per-round ratios');
  return [
    '# Consumer throughput results',
    '',
    `${result.date} · ${result.machine.cpuModel} × ${result.machine.cpus} · Node ${result.node} · ${result.postgres.version} (synchronous_commit=${result.postgres.synchronous_commit}) · Kafka ${result.kafka.version} (${result.kafka.broker})`,
    '',
    `Parameters: ${params.runs} run(s) × ${params.rounds} rounds × ${params.events} ORDER_CREATED events, ${params.partitions} partitions, one consumer (partitionsConsumedConcurrently 1 for A and C/D, 3 for V, P, P1, I and B: the production default), pg pool ${params.poolSize} (I and B: createPool, node-postgres's default 10, as the apps); warm-up ${params.warmup} events per variant.`,
    '',
    `## Events per second (run ${last.run}: median over rounds; ratio: ${runsNote})`,
    '',
    ...markdownTableLinesOf(variants, {
      variant: (v) => `${v.key}: ${v.label}`,
      'events/s': (v) => last.summary.eventsPerSec[v.key]?.toFixed(0) ?? 'n/a',
      '÷ A': (v) => (v.key === 'A' ? '1.00×' : times(ratio(`${v.key}/A`), 3)),
      'transactions/s': (v) => last.summary.transactionsPerSec[v.key]?.toFixed(0) ?? 'n/a',
      'mean kafkajs batch': (v) =>
        Number.isNaN(last.summary.meanBatchSize[v.key]) ? '—' : String(last.summary.meanBatchSize[v.key]),
      'CPU s per 1,000 events': (v) =>
        Object.entries(last.summary.cpuPer1000[v.key] ?? {})
          .map(([group, s]) => `${group} ${s.toFixed(2)}`)
          .join(', '),
    }),
    '',
    `Ratios (${runsNote}):`,
    '',
    ...markdownTableLinesOf(comparisons(), {
      ratio: ([name]) => name,
      value: ([name]) => times(ratio(name), 3),
    }),
    '',
    ...Object.entries(last.summary.statements).flatMap(([key, rows]) => {
      const mine = last.rounds.filter((m) => m.variant === key);
      const chunks = mine.reduce((sum, m) => sum + m.transactions, 0);
      const events = mine.reduce((sum, m) => sum + m.events, 0);
      const total = rows.reduce((sum, row) => sum + row.execMsPer1000, 0);
      return [
        `## ${key}: PostgreSQL execution time per statement (pg_stat_statements, run ${last.run}, all ${mine.length} rounds)`,
        '',
        `${chunks} chunk transactions for ${events} events (${round(events / chunks, 1)} events per chunk); execution time of all statements ${total.toFixed(1)} ms per 1,000 events (exec only: no round trip, no commit flush).`,
        '',
        ...markdownTableLinesOf(
          rows.filter((row) => row.callsPerChunk >= 0.01),
          {
            statement: (row) => `\`${row.query.replaceAll('|', '\\|')}\``,
            'calls per chunk': (row) => row.callsPerChunk.toFixed(2),
            'rows per call': (row) => row.rowsPerCall.toFixed(1),
            'exec ms per 1,000 events': (row) => row.execMsPer1000.toFixed(2),
            'mean ms': (row) => row.meanMs.toFixed(3),
          },
        ),
        '',
      ];
    }),
    ...(result.runs.length > 1 ? ['## Per-run ratios', '', ...perRunRatiosTable(result.acrossRuns), ''] : []),
  ].join('\n');
}
