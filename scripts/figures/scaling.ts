import { num, percent, table } from './format.ts';
import type { FigureTable } from './types.ts';

type Step = {
  offeredRate: number;
  sustained: boolean;
  p99Ms: number;
  seconds: number;
  cpuMsPerOrder: Record<string, number>;
  cpuSeconds: Record<string, number>;
  machineBusy: number;
  loadavg: number[];
};
type Scaling = {
  date: string;
  args: Record<string, string>;
  cells: { kafka: 'broker' | 'cluster'; instances: number; runs: { capacity: number; steps: Step[] }[] }[];
};

const SCALING = 'bench/results/scaling.json';
const KAFKA = { broker: '1 broker, RF 1', cluster: '3 brokers, RF 3' } as const;

/** Capacity with n instances per consumer group and n relays per outbox, on one broker and on three. */
export const scalingMatrix: FigureTable = {
  sources: [SCALING],
  render({ read, link }) {
    const results = read<Scaling>(SCALING);
    const cells = [...results.cells].sort(
      (a, b) => a.kafka.localeCompare(b.kafka) || a.instances - b.instances,
    );
    const rows = cells.map(({ kafka, instances, runs }) => {
      const run = runs[0];
      const step = run?.steps.filter((s) => s.sustained && s.offeredRate === run.capacity).at(-1);
      if (!run || !step) return [KAFKA[kafka], String(instances), 'none sustained', '', '', '', '', ''];
      return [
        KAFKA[kafka],
        String(instances),
        num(run.capacity),
        `${num(step.p99Ms)} ms`,
        num(step.cpuMsPerOrder.total ?? Number.NaN, 1),
        num((step.cpuSeconds.total ?? Number.NaN) / step.seconds, 2),
        percent(step.machineBusy),
        num(step.loadavg[0] ?? Number.NaN, 1),
      ];
    });
    return [
      table(
        [
          'Kafka',
          'n',
          'capacity (orders/s)',
          'p99 at capacity',
          'CPU ms per order at capacity',
          'our processes, cores',
          'machine busy',
          'load average (1 min)',
        ],
        rows,
      ),
      '',
      `${link(SCALING)}: ${results.args.step ?? '?'} steps, one run per cell.`,
    ].join('\n');
  },
};
