import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import type { MeasuredReport, Step, SystemResults, VariantReport } from '../../bench/system/records.ts';
import { day, duration, num, sentence, times } from './format.ts';
import type { FigureTable } from './types.ts';

type Report = MeasuredReport;

/** One variant's report of a bench:system results file (`path`, for the error). */
export function variant<R extends VariantReport>(results: SystemResults<R>, name: string, path: string): R {
  const found = results.reports.find((candidate) => candidate.variant === name);
  if (!found) throw new Error(`no ${name} variant in ${path}`);
  return found;
}

/** The step that set the capacity: the last sustained one at that rate. */
export function atCapacity(found: Pick<VariantReport, 'steps' | 'capacity'>): Step | undefined {
  return found.steps.filter((step) => step.sustained && step.offeredRate === found.capacity).at(-1);
}

/** CPU ms per order of the three polling relays together. */
export const relaysCpu = (cpu: Record<string, number>) =>
  (cpu['relay-orders'] ?? 0) + (cpu['relay-inventory'] ?? 0) + (cpu['relay-billing'] ?? 0);

const cpuAtCapacity = (found: Report) => num(atCapacity(found)?.cpuMsPerOrder.total, 1);
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
    const rows = ['shipped', 'current'].flatMap((name) =>
      runs.map(({ path, results, label }, index) => {
        const found = variant(results, name, path);
        return [
          index === 0 ? (VARIANT_LABEL[name] ?? name) : '',
          `\`${found.revision}\`, ${day(results.date)}, ${label}`,
          `**${num(found.capacity)}**`,
          cpuAtCapacity(found),
          num(found.atFixedRate.cpuMsPerOrder.total, 1),
          latency(found.atFixedRate),
          offeredAt(found, 1.5),
          offeredAt(found, 2),
        ];
      }),
    );
    const sources = runs.map(
      ({ path, results, label }) =>
        `${label}: ${link(path)}, ${duration(results.args.step)} steps, ` +
        `load average ${loadRange(variant(results, 'current', path))} over its steps`,
    );
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
      sentence(sources),
    ].join('\n\n');
  },
};

const POLLING_VS_CDC = resultsFile('system.polling-vs-cdc.json');

export const systemPollingVsCdc: FigureTable = {
  sources: [POLLING_VS_CDC],
  render({ read, link }) {
    const results = read<SystemResults<Report>>(POLLING_VS_CDC);
    const fixed = results.args['fixed-rate'] ?? '?';
    const rows = ['current', 'cdc'].map((name) => {
      const found = variant(results, name, POLLING_VS_CDC);
      const cpu = found.atFixedRate.cpuMsPerOrder;
      return [
        name === 'current' ? 'polling (NOTIFY, the default)' : (VARIANT_LABEL[name] ?? name),
        num(found.capacity),
        latency(found.atFixedRate),
        num(cpu.total, 1),
        num(cpu.postgres, 1),
        num(relaysCpu(cpu), 1),
        cpu.connect === undefined ? '—' : num(cpu.connect, 1),
      ];
    });
    const current = variant(results, 'current', POLLING_VS_CDC);
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
        `load average ${loadRange(current)} over the polling steps, ${loadRange(variant(results, 'cdc', POLLING_VS_CDC))} over the CDC ones.`,
    ].join('\n\n');
  },
};
