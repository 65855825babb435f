/** What bench:scaling records per cell and run, and the Markdown of its results file. */
import { markdownTableLinesOf } from '@outbox/devstack/table';
import type { MachineInfo } from '../support/environment.ts';
import type { Criteria } from '../system/capacitySearch.ts';
import type { Step } from '../system/records.ts';

/** `broker`: one node, replication factor 1. `cluster`: three nodes, RF 3, min.insync.replicas 2. */
export type KafkaKind = 'broker' | 'cluster';

/** n instances of each service in its consumer group and n relays on each outbox, on one Kafka. */
export type Cell = { kafka: KafkaKind; instances: number };

export type CellRun = {
  run: number;
  capacity?: number;
  steps: Step[];
  /** False when the deadline stopped the search before it converged. */
  complete: boolean;
  /** Why the cell has no capacity, when it failed before the search. */
  error?: string;
  loadavgAtEnd: number[];
};

export type CellReport = Cell & { runs: CellRun[]; medianCapacity: number };

/** What bench:scaling writes (scaling.json, beside the run record writeResults adds). */
export type ScalingReport = {
  date: string;
  finished: string;
  machine: MachineInfo;
  postgres: string;
  criteria: Criteria;
  /** Its flags as given. */
  args: { step: string; cells: string; runs: string } & Record<string, string>;
  cells: CellReport[];
};

const KINDS = ['orders', 'inventory', 'billing', 'relays', 'kafka', 'postgres'];
const KAFKA_LABEL: Record<KafkaKind, string> = {
  broker: '1 broker, RF 1',
  cluster: '3 brokers, RF 3, min.insync 2',
};

/** The step at the capacity found, of the run whose capacity is the median (or the first). */
function atCapacity(cell: CellReport): Step | undefined {
  const run = cell.runs.find((r) => r.capacity === cell.medianCapacity) ?? cell.runs[0];
  return run?.steps.find((s) => s.offeredRate === run.capacity);
}

/** Cores our processes kept busy over a step: their CPU seconds ÷ the step's seconds. */
const cores = (s: Step) => ((s.cpuSeconds.total ?? Number.NaN) / s.seconds).toFixed(2);
const busy = (s: Step) => `${Math.round(s.machineBusy * 100)}%`;

function summary(report: ScalingReport): string[] {
  const base = (kafka: KafkaKind) =>
    report.cells.find((c) => c.kafka === kafka && c.instances === 1)?.medianCapacity;
  const found = (cell: CellReport) => cell.runs.length > 0 && !Number.isNaN(cell.medianCapacity);
  const at = (cell: CellReport, f: (s: Step) => string) => {
    const s = atCapacity(cell);
    return s ? f(s) : '—';
  };
  return markdownTableLinesOf(report.cells, {
    Kafka: (cell) => KAFKA_LABEL[cell.kafka],
    'instances = relays': (cell) => cell.instances,
    'capacity (orders/s)': (cell) =>
      cell.runs.length === 0 ? 'not run' : found(cell) ? cell.medianCapacity : 'none found',
    'per run': (cell) =>
      cell.runs.map((r) => r.error ?? `${r.capacity ?? '—'}${r.complete ? '' : ' (cut short)'}`).join(', ') ||
      '—',
    '× of n = 1': (cell) => {
      const one = base(cell.kafka);
      return one && found(cell) ? `${(cell.medianCapacity / one).toFixed(2)}×` : '—';
    },
    'p99 at capacity': (cell) => at(cell, (s) => `${s.latencyMs.p99} ms`),
    'CPU ms/order': (cell) => at(cell, (s) => String(s.cpuMsPerOrder.total)),
    'our processes: cores busy': (cell) => at(cell, cores),
    'machine busy': (cell) => at(cell, busy),
    'load avg (1 min)': (cell) => at(cell, (s) => String(s.loadavg[0])),
  });
}

function cellSteps(cell: CellReport): string[] {
  return cell.runs.flatMap((run) => [
    '',
    `## ${KAFKA_LABEL[cell.kafka]}, n = ${cell.instances}, run ${run.run}: every step`,
    '',
    ...markdownTableLinesOf(run.steps, {
      'offered/s': (s) => s.offeredRate,
      'accepted/s': (s) => s.achievedRate.toFixed(1),
      p50: (s) => `${s.latencyMs.p50} ms`,
      p99: (s) => `${s.latencyMs.p99} ms`,
      verdict: (s) => (s.sustained ? 'sustained' : s.reasons.join('; ')),
      ...Object.fromEntries(KINDS.map((k) => [`${k} CPU s`, (s: Step) => s.cpuSeconds[k] ?? '—'])),
      'ours: cores': cores,
      'machine busy': busy,
      'load avg 1/5/15': (s) => s.loadavg.join(' / '),
    }),
  ]);
}

export function markdown(report: ScalingReport, stepMs: number): string {
  const notRun = report.cells.filter((c) => c.runs.length === 0);
  const loads = report.cells.flatMap((c) => c.runs.flatMap((r) => r.steps.map((s) => s.loadavg[0] ?? 0)));
  return [
    '# bench:scaling — capacity with n instances and relays, on one broker and on three',
    '',
    `Run ${report.date} to ${report.finished}; ${JSON.stringify(report.machine)}; ${report.postgres}; ` +
      `steps of ${report.args.step}` +
      (stepMs < 60_000 ? ' (shorter than the 60 s the definition asks: a quick run)' : '') +
      `; cells ${report.args.cells}; ${report.args.runs} run(s), capacity = median over runs.`,
    '',
    `The machine's 1-minute load average over the steps: ${Math.min(...loads)} to ${Math.max(...loads)} ` +
      `on ${String(report.machine.cpus)} cores. "Machine busy" counts every process on the machine, ` +
      "other users' too; \"our processes: cores\" counts only the stack's, Kafka's and its PostgreSQL backends'.",
    '',
    'Sustained = the API accepted ≥ 95% of the rate, end-to-end p99 ≤ 1 s (order created → decided, orders database), no more than 1 s of orders pending when the load stopped, and everything settled. n = instances of orders, inventory and billing in their consumer groups = relays on each outbox; the rate is shared evenly between the n orders APIs.',
    '',
    ...summary(report),
    ...(notRun.length
      ? ['', `Not run (deadline): ${notRun.map((c) => `${c.kafka}:${c.instances}`).join(', ')}.`]
      : []),
    ...report.cells.flatMap(cellSteps),
    '',
    'CPU s: CPU seconds over the step (user + system, /proc), summed over every process of that kind; postgres = the backends serving the stack\'s databases. "ours: cores" = all of them ÷ the step\'s seconds.',
    '',
  ].join('\n');
}
