/** The Markdown of the results file. */

import { markdownTableLines, markdownTableLinesOf } from '@outbox/devstack/table';
import type { RunHeader } from '../support/environment.ts';
import type { ClaimPhase, ClaimSummary, LoopSummary } from './claims.ts';
import { claimers } from './claims.ts';
import { params } from './params.ts';
import type { Plan } from './plans.ts';
import type { lockDemo, retentionA, retentionB } from './removal.ts';
import type { Stage } from './stages.ts';
import { fmt, int } from './timing.ts';

/** What the two removals and the lock demonstration measured (removal.ts). */
type Retention = {
  A: Awaited<ReturnType<typeof retentionA>>;
  B: Awaited<ReturnType<typeof retentionB>>;
  lockDemo: Awaited<ReturnType<typeof lockDemo>>;
};

/** What bench:retention writes (retention.json, beside the run record writeResults adds). */
export type RetentionResults = RunHeader & {
  benchmark: 'retention';
  durationSec: number;
  loadavgBefore: number[];
  loadavgAfter: number[];
  parameters: typeof params;
  /** The claim statement as claimBatch sent it in this run (it has changed over time). */
  claimSql: string;
  data: {
    dataStart: string;
    dataEnd: string;
    cutoff: string;
    partitions: string[];
    buildPartitionedMs: number;
  };
  claimAtScale: Omit<Stage, 'plan'>[];
  claimPhases: ClaimPhase[];
  retention: Retention;
  plans: Plan[];
};

const loopCell = (s: LoopSummary) => `${fmt(s.medianMs)} / ${fmt(s.p99Ms)} / ${fmt(s.maxMs)} (${s.n})`;

export function markdownReport(r: Record<string, unknown>, stages: Stage[]): string {
  return [
    ...heading(r),
    ...claimVsPublishedSection(stages),
    ...claimPhasesSection(r.claimPhases as ClaimPhase[]),
    ...retentionSection(r.retention as Retention),
    ...plansSection(r.plans as Plan[]),
  ].join('\n');
}

function heading(r: Record<string, unknown>): string[] {
  const machine = r.machine as Record<string, string | number>;
  const postgres = r.postgres as Record<string, string>;
  return [
    '# Retention and the claim query at scale',
    '',
    `${r.date} · ${machine.cpuModel} × ${machine.cpus} · Node ${r.node} · ${postgres.version} (shared_buffers=${postgres.shared_buffers}, max_wal_size=${postgres.max_wal_size}, autovacuum=${postgres.autovacuum}) · load average before ${(r.loadavgBefore as number[]).join(' ')}, after ${(r.loadavgAfter as number[]).join(' ')} · ${r.durationSec} s`,
    '',
    `Parameters: ${int(params.published)} published rows over ${params.days} days + ${int(params.pending)} pending rows over ${int(params.aggregates)} aggregates; retention ${params.retentionDays} days; deletePublished batch ${params.batch}; claim limit ${params.claimLimit}, ${params.rounds} rounds × ${params.claimsPerRound} claims per table, each in BEGIN … ROLLBACK.`,
    '',
  ];
}

function claimVsPublishedSection(stages: Stage[]): string[] {
  const a = (s: Stage) => s.claims.summary.A as ClaimSummary;
  return [
    '## Claim latency vs published rows (real table)',
    '',
    ...markdownTableLinesOf(stages, {
      'published rows': (s) => int(s.published),
      'table size MiB': (s) => s.sizes.totalMiB,
      'claim median ms': (s) => fmt(a(s).medianMs),
      'claim p99 ms': (s) => fmt(a(s).p99Ms),
      '0-published baseline median ms': (s) => fmt((s.claims.summary.R as ClaimSummary).medianMs),
      'ratio vs baseline': (s) => `${fmt(a(s).vsRef ?? Number.NaN)}×`,
      'EXPLAIN ANALYZE planning + execution ms': (s) =>
        `${fmt(s.plan.planningMs)} + ${fmt(s.plan.executionMs)}`,
      'rows claimed': (s) => a(s).rowsPerClaim,
    }),
  ];
}

function claimPhasesSection(claimPhases: ClaimPhase[]): string[] {
  const rows = claimPhases.flatMap((phase) =>
    Object.entries(phase.summary).map(([key, s]) => ({ phase: phase.phase, key, ...s })),
  );
  return [
    '',
    '## Claim latency, real table vs partitioned',
    '',
    ...markdownTableLinesOf(rows, {
      phase: (s) => s.phase,
      table: (s) => claimers[s.key as 'A' | 'P' | 'R'].label,
      'median ms': (s) => fmt(s.medianMs),
      'p99 ms': (s) => fmt(s.p99Ms),
      'max ms': (s) => fmt(s.maxMs),
      'ratio vs baseline': (s) => (s.vsRef === undefined ? '—' : `${fmt(s.vsRef)}×`),
    }),
  ];
}

function retentionSection(retention: Retention): string[] {
  const { A, B } = retention;
  return [
    '',
    '## Retention',
    '',
    ...markdownTableLines(
      ['', 'A: deletePublished batches (relay)', 'B: drop day partitions'],
      [
        ['rows removed', int(A.rowsDeleted), int(B.rowsDeleted)],
        [
          'statements',
          `${A.batches} deletes of ≤ ${params.batch}`,
          `${B.partitions.length} × (guard, detach concurrently, drop)`,
        ],
        ['total time', `${fmt(A.totalMs / 1000, 1)} s`, `${fmt(B.totalMs / 1000, 2)} s`],
        ['rows/s', int(A.rowsPerSec), int(B.rowsPerSec)],
        [
          'longest statement',
          `${fmt(A.batchMs.max)} ms (batch median ${fmt(A.batchMs.median)}, p99 ${fmt(A.batchMs.p99)})`,
          `detach ${fmt(Math.max(...B.partitions.map((p) => p.detachMs)))} ms, drop ${fmt(Math.max(...B.partitions.map((p) => p.dropMs)))} ms`,
        ],
        [
          'WAL (cluster-wide LSN diff)',
          `${A.walMiB} MiB (+ ${A.vacuumWalMiB} MiB for VACUUM)`,
          `${B.walMiB} MiB`,
        ],
        [
          'size before → after',
          `${A.sizesBefore.totalMiB} → ${A.sizesAfter.totalMiB} MiB (after VACUUM ${A.sizesAfterVacuum.totalMiB} MiB)`,
          `${B.sizesBefore.totalMiB} → ${B.sizesAfter.totalMiB} MiB`,
        ],
        [
          'VACUUM afterwards',
          `${fmt(A.vacuumMs / 1000, 1)} s (space reusable, not returned to the OS)`,
          'not needed',
        ],
        [
          'claim on the table during retention (median / p99 / max ms, n)',
          loopCell(A.claimDuring),
          loopCell(B.claimDuring),
        ],
        [
          'claim on the 0-published baseline meanwhile (machine busy)',
          loopCell(A.baselineClaimDuring),
          loopCell(B.baselineClaimDuring),
        ],
      ],
    ),
    '',
    ...markdownTableLinesOf(B.partitions, {
      partition: (p) => p.partition,
      rows: (p) => int(p.rows),
      'guard ms': (p) => fmt(p.guardMs),
      'detach concurrently ms': (p) => fmt(p.detachMs),
      'drop ms': (p) => fmt(p.dropMs),
    }),
    '',
    `### Partition DDL behind a transaction holding ACCESS SHARE on the parent for ${params.blockerMs} ms`,
    '',
    ...markdownTableLinesOf(retention.lockDemo, {
      method: (d) => d.method,
      'DDL ms': (d) => fmt(d.ddlMs),
      'claims during': (d) => d.claimsDuring,
      'max claim ms': (d) => fmt(d.maxClaimMs),
      'claims > 100 ms': (d) => d.claimsOver100ms,
    }),
    '',
  ];
}

function plansSection(plans: Plan[]): string[] {
  return [
    '## Plans (EXPLAIN (ANALYZE, BUFFERS), claim in a rolled-back transaction)',
    '',
    ...plans.flatMap((plan) => [
      `### ${plan.table}, ${plan.phase}`,
      '',
      `Scans: ${plan.scans.join('; ')}.`,
      '',
      '```',
      plan.text,
      '```',
      '',
    ]),
  ];
}
