/** The throughput variants (relays, bare producers) and the ratios reported between them. */
import type { CpuReport } from '../support/cpu.ts';
import type { TimedCell } from '../support/stats.ts';
import { params } from './params.ts';

export type StatsState = 'fresh' | 'stale';
export type ThroughputVariant = {
  key: string;
  label: string;
  /** producer: bare kafkajs (the relay's client); platformatic: bare @platformatic/kafka. */
  kind: 'relay' | 'producer' | 'platformatic';
  count: number;
  /** Relays: planner statistics of the outbox when the backlog arrives (see measureRelays). */
  stats?: StatsState;
};

export const relayLabel = (count: number) => `${count} relay process${count > 1 ? 'es' : ''}`;
export const throughputVariants: ThroughputVariant[] = [
  ...params.relayCounts.map((count) => ({
    key: `R${count}`,
    label: `${relayLabel(count)}, statistics fresh`,
    kind: 'relay' as const,
    count,
    stats: 'fresh' as const,
  })),
  ...params.staleRelayCounts.map((count) => ({
    key: `S${count}`,
    label: `${relayLabel(count)}, statistics stale`,
    kind: 'relay' as const,
    count,
    stats: 'stale' as const,
  })),
  ...params.producerCounts.map((count) => ({
    key: `P${count}`,
    label:
      count === 1 ? 'bare kafkajs producer (ceiling)' : `${count} bare producers, ${count} batches in flight`,
    kind: 'producer' as const,
    count,
  })),
  // The same ceiling with another client: does the relay's loop or kafkajs bound it?
  ...params.producerCounts.map((count) => ({
    key: `Q${count}`,
    label:
      count === 1
        ? 'bare @platformatic/kafka producer'
        : `${count} bare @platformatic/kafka producers, ${count} batches in flight`,
    kind: 'platformatic' as const,
    count,
  })),
];

export type ThroughputRound = TimedCell & {
  /** Relays only: events each relay published (from /healthz). */
  perRelay?: number[];
  /** Relays only: how long preparing the backlog took (history, analyze, insert; not timed). */
  prepareMs?: number;
  /** Relays only: first published_at − commit (the first batch's claim + send + mark). */
  firstPublishMs?: number;
  /** Relays only: mean ms per call of each step (claims that found nothing included) and batches. */
  steps?: Record<string, number>;
  /** Relays only: plan nodes PostgreSQL chose for the claim query right after the backlog committed. */
  claimPlan?: string;
  cpu: CpuReport;
};

/** Throughput comparisons: [name, variant, baseline]. */
export const throughputComparisons = (): [string, string, string][] => {
  const out: [string, string, string][] = [];
  const has = (key: string) => throughputVariants.some((v) => v.key === key);
  const add = (x: string, y: string) => {
    if (has(x) && has(y)) out.push([`${x}/${y}`, x, y]);
  };
  for (const k of params.relayCounts) add(`R${k}`, 'P1');
  for (const k of params.relayCounts) add(`R${k}`, 'Q1');
  add('Q1', 'P1');
  for (const p of params.producerCounts) if (p !== 1) add(`Q${p}`, `P${p}`);
  for (const k of params.staleRelayCounts) add(`S${k}`, 'P1');
  for (const p of params.producerCounts) if (p !== 1) add(`R${p}`, `P${p}`);
  for (const k of params.relayCounts) if (k !== 1) add(`R${k}`, 'R1');
  for (const k of params.staleRelayCounts) add(`R${k}`, `S${k}`);
  for (const p of params.producerCounts) if (p !== 1) add(`P${p}`, 'P1');
  return out;
};
