/** What bench:scaling records per cell and run, and the Markdown of its results file. */
import { markdownTableLines } from '@outbox/devstack/table';
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
  return markdownTableLines(
    [
      'Kafka',
      'instances = relays',
      'capacity (orders/s)',
      'per run',
      '× of n = 1',
      'p99 at capacity',
      'CPU ms/order',
      'our processes: cores busy',
      'machine busy',
      'load avg (1 min)',
    ],
    report.cells.map((cell) => {
      const s = atCapacity(cell);
      const one = base(cell.kafka);
      const ran = cell.runs.length > 0;
      return [
        KAFKA_LABEL[cell.kafka],
        String(cell.instances),
        ran ? String(Number.isNaN(cell.medianCapacity) ? 'none found' : cell.medianCapacity) : 'not run',
        cell.runs
          .map((r) => r.error ?? `${r.capacity ?? '—'}${r.complete ? '' : ' (cut short)'}`)
          .join(', ') || '—',
        one && ran && !Number.isNaN(cell.medianCapacity) ? `${(cell.medianCapacity / one).toFixed(2)}×` : '—',
        s ? `${s.latencyMs.p99} ms` : '—',
        s ? String(s.cpuMsPerOrder.total) : '—',
        s ? cores(s) : '—',
        s ? busy(s) : '—',
        s ? String(s.loadavg[0]) : '—',
      ];
    }),
  );
}

function cellSteps(cell: CellReport): string[] {
  const lines: string[] = [];
  for (const run of cell.runs) {
    lines.push('', `## ${KAFKA_LABEL[cell.kafka]}, n = ${cell.instances}, run ${run.run}: every step`, '');
    lines.push(
      ...markdownTableLines(
        [
          'offered/s',
          'accepted/s',
          'p50',
          'p99',
          'verdict',
          ...KINDS.map((k) => `${k} CPU s`),
          'ours: cores',
          'machine busy',
          'load avg 1/5/15',
        ],
        run.steps.map((s) => [
          String(s.offeredRate),
          s.achievedRate.toFixed(1),
          `${s.latencyMs.p50} ms`,
          `${s.latencyMs.p99} ms`,
          s.sustained ? 'sustained' : s.reasons.join('; '),
          ...KINDS.map((k) => String(s.cpuSeconds[k] ?? '—')),
          cores(s),
          busy(s),
          s.loadavg.join(' / '),
        ]),
      ),
    );
  }
  return lines;
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
