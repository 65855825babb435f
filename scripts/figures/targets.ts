import type { VariantReport } from '../../bench/system/records.ts';
import { peakAccepted, targetsTable } from '../../bench/system/targets.ts';
import { day, num, table } from './format.ts';
import type { FigureTable } from './types.ts';

/** The run that measures the performance targets against a reference revision, as shipped. */
const TARGETS_RUN = 'bench/results/system.targets.json';

type TargetsResults = {
  date: string;
  args: { reference: string; step: string; 'fixed-rate': string };
  machine: { cpu?: string; cpuModel?: string };
  reports: VariantReport[];
};

/** The targets, each variant against the reference of the run (bench/system/targets.ts decides). */
export const performanceTargets: FigureTable = {
  sources: [TARGETS_RUN],
  render({ read, link }) {
    const results = read<TargetsResults>(TARGETS_RUN);
    return [
      targetsTable(results.reports, results.args.reference).join('\n'),
      '',
      `${link(TARGETS_RUN)}; ${day(results.date)}, steps of ${results.args.step}, the fixed rate ${results.args['fixed-rate']} orders/s.`,
    ].join('\n');
  },
};

/** Each variant's capacity, peak and CPU per order at the fixed rate, per process. */
export const performanceTargetsDetail: FigureTable = {
  sources: [TARGETS_RUN],
  render({ read }) {
    const results = read<TargetsResults>(TARGETS_RUN);
    const processes = [
      ...new Set(results.reports.flatMap((r) => Object.keys(r.atFixedRate?.cpuMsPerOrder ?? {}))),
    ].filter((name) => name !== 'total');
    return table(
      [
        'variant',
        'capacity (orders/s)',
        'peak accepted/s',
        `CPU ms/order at ${results.args['fixed-rate']}/s`,
        ...processes,
      ],
      results.reports.map((r) => [
        `${r.variant} (\`${r.revision}\`)`,
        num(r.capacity ?? Number.NaN),
        num(peakAccepted(r) ?? Number.NaN, 1),
        num(r.atFixedRate?.cpuMsPerOrder.total ?? Number.NaN, 1),
        ...processes.map((name) => num(r.atFixedRate?.cpuMsPerOrder[name] ?? Number.NaN, 2)),
      ]),
    );
  },
};
