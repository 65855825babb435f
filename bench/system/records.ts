/** What bench:system records per variant and step (system.json), read by its report and its targets. */
import type { MachineInfo } from '../support/environment.ts';
import type { Criteria } from './capacitySearch.ts';
import type { Refusals } from './refusals.ts';

/**
 * baseline: an earlier revision; current: this checkout, tracing off; shipped: this checkout as
 * `./dev demo` runs it (spans to a real Zipkin, Prometheus scraping every 5 s); cdc: this checkout,
 * every outbox through Debezium.
 */
export type Variant = 'baseline' | 'current' | 'shipped' | 'cdc' | (string & {});

export type Step = {
  offeredRate: number;
  achievedRate: number;
  accepted: number;
  /** Orders the API refused at once with 503 overloaded (one attempt each: not retried). */
  shed?: number;
  /** Orders neither accepted nor shed (a 4xx, another 503, no answer): none expected. */
  rejected?: number;
  /** Client-side answer time of the POST, p99, for the accepted and for the shed orders. */
  answerP99Ms?: { accepted: number; shed: number };
  /** The orders API's own account of its refusals (of the first API on a scaled stack). */
  refusals?: Refusals;
  seconds: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  pendingAtEnd: number;
  settled: boolean;
  sustained: boolean;
  reasons: string[];
  /** CPU ms per accepted order, per process (and the Kafka JVM, and PostgreSQL backends). */
  cpuMsPerOrder: Record<string, number>;
  /** CPU seconds over the load, per process (or kind of process), and their total. */
  cpuSeconds: Record<string, number>;
  /** Resident memory at the end of the load, MiB (summed over a kind's processes). */
  rssMiB: Record<string, number>;
  /**
   * CPU seconds the load generator itself spent over the load (the benchmark's own process, on the
   * same cores as the system): not in `cpuSeconds`, which counts the system alone.
   */
  loadGeneratorCpuSeconds?: number;
  /** Busy share of all the machine's cores over the load, 0..1 (every process, ours or not). */
  machineBusy: number;
  /** Write-ahead log the whole server wrote over the load, KiB per accepted order. */
  walKiBPerOrder?: number;
  /** Checkpoints the server began over the load (by time or by WAL volume, max_wal_size). */
  checkpoints?: number;
  /** The machine's 1, 5 and 15-minute load averages at the end of the load. */
  loadavg: number[];
};
export type VariantReport = {
  variant: Variant;
  checkout: string;
  revision: string;
  capacity?: number;
  /** The capacity was given (--capacity), not searched for: `steps` is empty. */
  capacityGiven?: boolean;
  steps: Step[];
  /** Offered below capacity (--factors under 1), for latency and refusals. */
  underload?: Step[];
  atHalfCapacity?: Step;
  atNinetyPercent?: Step;
  /**
   * At --fixed-rate: with `fixedRateAt: 'start'`, right after the warm-up, before any other step;
   * in the runs that do not say, after every other step.
   */
  atFixedRate?: Step;
  fixedRateAt?: 'start';
  /** The fixed rate again after every other step, on the tables the search grew. */
  atFixedRateAfterSearch?: Step;
  /** Offered above capacity (1.5× and 2×): what the admission limit keeps. */
  overload?: Step[];
};

/** What bench:system writes (system.json, beside the run record writeResults adds): the run and each variant's report. */
export type SystemResults<Report extends VariantReport = VariantReport> = {
  date: string;
  machine: MachineInfo;
  /** PostgreSQL's version. */
  postgres?: string;
  criteria: Criteria;
  /** Its flags as given (the figures read the single-valued ones; `env` and `variant-env` are lists). */
  args: Record<string, string>;
  reports: Report[];
};

/** A variant whose capacity was searched and measured at the fixed rate: the runs the docs' figures read. */
export type MeasuredReport = VariantReport & { capacity: number; atFixedRate: Step };
