/** One run's figures: medians over rounds, the paired ratios to A, I's and B's statements. */
import { median, pairedRatio, round } from '../support/stats.ts';
import type { Measurement } from './measure.ts';
import { params, variants } from './params.ts';

export type RunSummary = {
  eventsPerSec: Record<string, number>;
  meanBatchSize: Record<string, number>;
  transactionsPerSec: Record<string, number>;
  cpuPer1000: Record<string, Record<string, number>>;
  ratios: Record<string, number>;
  /** I and B: each statement over all rounds, per chunk transaction and per 1,000 events. */
  statements: Record<string, StatementSummary[]>;
};

export type StatementSummary = {
  query: string;
  callsPerChunk: number;
  rowsPerCall: number;
  execMsPer1000: number;
  meanMs: number;
};

/** Sums a variant's pg_stat_statements over its rounds (same statement text = same statement). */
export function statementSummary(mine: Measurement[]): StatementSummary[] {
  const events = mine.reduce((sum, m) => sum + m.events, 0);
  const chunks = mine.reduce((sum, m) => sum + m.transactions, 0);
  const byQuery = new Map<string, { calls: number; rows: number; totalMs: number }>();
  for (const m of mine)
    for (const st of m.statements ?? []) {
      const entry = byQuery.get(st.query) ?? { calls: 0, rows: 0, totalMs: 0 };
      entry.calls += st.calls;
      entry.rows += st.rows;
      entry.totalMs += st.totalMs;
      byQuery.set(st.query, entry);
    }
  return [...byQuery]
    .map(([query, entry]) => ({
      query,
      callsPerChunk: round(entry.calls / chunks, 2),
      rowsPerCall: round(entry.rows / entry.calls, 1),
      execMsPer1000: round((entry.totalMs * 1000) / events, 2),
      meanMs: round(entry.totalMs / entry.calls, 3),
    }))
    .sort((a, b) => b.execMsPer1000 - a.execMsPer1000);
}
export const comparisons = (): [string, string, string][] => {
  const has = (key: string) => variants.some((v) => v.key === key);
  const out: [string, string, string][] = [];
  for (const v of variants) if (v.key !== 'A') out.push([`${v.key}/A`, v.key, 'A']);
  for (const key of ['P', 'C100', 'D']) if (has(key) && has('P1')) out.push([`${key}/P1`, key, 'P1']);
  if (has('P') && has('V')) out.push(['P/V', 'P', 'V']);
  return out;
};

export function summarize(rounds: Measurement[]): RunSummary {
  const eventsPerSec: Record<string, number> = {};
  const meanBatchSize: Record<string, number> = {};
  const transactionsPerSec: Record<string, number> = {};
  const cpuPer1000: Record<string, Record<string, number>> = {};
  const statements: Record<string, StatementSummary[]> = {};
  for (const variant of variants) {
    const mine = rounds.filter((m) => m.variant === variant.key);
    if (mine.some((m) => m.statements)) statements[variant.key] = statementSummary(mine);
    eventsPerSec[variant.key] = round(median(mine.map((m) => m.eventsPerSec)), 1);
    meanBatchSize[variant.key] = round(median(mine.map((m) => m.meanBatchSize)), 1);
    transactionsPerSec[variant.key] = round(
      median(mine.map((m) => (m.transactions / m.elapsedMs) * 1000)),
      1,
    );
    const groups: Record<string, number> = {};
    for (const group of Object.keys(mine[0]?.cpu.seconds ?? {}))
      groups[group] = round(median(mine.map((m) => ((m.cpu.seconds[group] ?? 0) * 1000) / m.events)), 3);
    cpuPer1000[variant.key] = groups;
  }
  const value = (r: number, key: string) =>
    rounds.find((m) => m.round === r && m.variant === key)?.eventsPerSec;
  const ratios: Record<string, number> = {};
  for (const [name, x, y] of comparisons()) ratios[name] = pairedRatio(params.rounds, value, x, y).median;
  return { eventsPerSec, meanBatchSize, transactionsPerSec, cpuPer1000, ratios, statements };
}
