import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import type { MeasuredReport, Step, SystemResults } from '../../bench/system/records.ts';
import { day, duration, num, times } from './format.ts';
import type { FigureTable } from './types.ts';

type Report = MeasuredReport;

function report(results: SystemResults<Report>, variant: string): Report {
  const found = results.reports.find((candidate) => candidate.variant === variant);
  if (!found) throw new Error(`no ${variant} variant in a bench:system result of ${results.date}`);
  return found;
}

/** The step that set the capacity: the last sustained one at that rate. */
function atCapacity(found: Report): Step | undefined {
  return found.steps.filter((step) => step.sustained && step.offeredRate === found.capacity).at(-1);
}

const cpuAtCapacity = (found: Report) => num(atCapacity(found)?.cpuMsPerOrder.total ?? Number.NaN, 1);
const latency = (step: Step) => `${num(step.latencyMs.p50)} / ${num(step.latencyMs.p99)} ms`;
const loadRange = (found: Report) => {
  const loads = found.steps.map((step) => step.loadavg?.[0]).filter((value) => value !== undefined);
  return `${num(Math.min(...loads), 1)}–${num(Math.max(...loads), 1)}`;
};

const SAMPLED = [resultsFile('system.sampled.json'), resultsFile('system.sampled.run-2.json')] as const;
const VARIANT_LABEL: Record<string, string> = {
  shipped: 'as shipped: tracing to Zipkin (sampled), Prometheus',
  current: 'tracing off',
  cdc: 'every outbox through Debezium (CDC)',
};

/** The runs the README's headline table shows, newest first, each with what sets it apart. */
const CAPACITY_RUNS: { path: string; label: string }[] = [
  { path: resultsFile('system.quiet.json'), label: 'a machine to itself' },
  { path: SAMPLED[0], label: 'run 1' },
  { path: SAMPLED[1], label: 'run 2, the variants in the other order' },
];

/** Accepted ÷ capacity at the overload step offered `factor` × the capacity, if the run had one. */
function offeredAt(found: Report, factor: number): string {
  const step = found.overload?.find(
    (candidate) => Math.abs(candidate.offeredRate / found.capacity - factor) < 0.05,
  );
  return step ? `${times(step.achievedRate / found.capacity)}, p99 ${num(step.latencyMs.p99)} ms` : '—';
}

export const systemCapacity: FigureTable = {
  sources: CAPACITY_RUNS.map((run) => run.path),
  render({ read, link }) {
    const runs = CAPACITY_RUNS.map((run) => ({ ...run, results: read<SystemResults<Report>>(run.path) }));
    const fixed = runs[0]?.results.args['fixed-rate'] ?? '?';
    const rows = ['shipped', 'current'].flatMap((variant) =>
      runs.map(({ results, label }, index) => {
        const found = report(results, variant);
        return [
          index === 0 ? (VARIANT_LABEL[variant] ?? variant) : '',
          `\`${found.revision}\`, ${day(results.date)}, ${label}`,
          `**${num(found.capacity)}**`,
          cpuAtCapacity(found),
          num(found.atFixedRate.cpuMsPerOrder.total ?? Number.NaN, 1),
          latency(found.atFixedRate),
          offeredAt(found, 1.5),
          offeredAt(found, 2),
        ];
      }),
    );
    const sources = runs
      .map(
        ({ path, results, label }) =>
          `${label}: ${link(path)}, ${duration(results.args.step)} steps, ` +
          `load average ${loadRange(report(results, 'current'))} over its steps`,
      )
      .join('; ');
    return [
      markdownTable(
        [
          'variant',
          'run',
          'capacity, orders/s',
          'CPU ms per order at capacity',
          `CPU ms per order at ${fixed}/s`,
          `p50 / p99 at ${fixed}/s`,
          'offered 1.5× capacity: accepted ÷ capacity',
          'offered 2×',
        ],
        rows,
      ),
      `${sources.charAt(0).toUpperCase()}${sources.slice(1)}.`,
    ].join('\n\n');
  },
};

const POLLING_VS_CDC = resultsFile('system.polling-vs-cdc.json');

export const systemPollingVsCdc: FigureTable = {
  sources: [POLLING_VS_CDC],
  render({ read, link }) {
    const results = read<SystemResults<Report>>(POLLING_VS_CDC);
    const fixed = results.args['fixed-rate'] ?? '?';
    const relays = (cpu: Record<string, number>) =>
      (cpu['relay-orders'] ?? 0) + (cpu['relay-inventory'] ?? 0) + (cpu['relay-billing'] ?? 0);
    const rows = ['current', 'cdc'].map((variant) => {
      const found = report(results, variant);
      const cpu = found.atFixedRate.cpuMsPerOrder;
      return [
        variant === 'current' ? 'polling (NOTIFY, the default)' : (VARIANT_LABEL[variant] ?? variant),
        num(found.capacity),
        latency(found.atFixedRate),
        num(cpu.total ?? Number.NaN, 1),
        num(cpu.postgres ?? Number.NaN, 1),
        num(relays(cpu), 1),
        cpu.connect === undefined ? '—' : num(cpu.connect, 1),
      ];
    });
    const current = report(results, 'current');
    return [
      markdownTable(
        [
          'mode',
          'capacity, orders/s',
          `p50 / p99 at ${fixed}/s`,
          `CPU ms per order at ${fixed}/s`,
          'of it PostgreSQL',
          'relays',
          'Connect',
        ],
        rows,
      ),
      `${link(POLLING_VS_CDC)}: revision \`${current.revision}\`, ${day(results.date)}, ${duration(results.args.step)} steps, ` +
        `load average ${loadRange(current)} over the polling steps, ${loadRange(report(results, 'cdc'))} over the CDC ones.`,
    ].join('\n\n');
  },
};
