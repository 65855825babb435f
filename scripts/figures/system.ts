import { day, duration, num, table, times } from './format.ts';
import type { FigureTable } from './types.ts';

type Step = {
  offeredRate: number;
  achievedRate: number;
  sustained: boolean;
  latencyMs: { p50: number; p99: number };
  cpuMsPerOrder: Record<string, number>;
  rssMiB?: Record<string, number>;
  loadavg?: number[];
};
type Report = {
  variant: string;
  revision: string;
  capacity: number;
  steps: Step[];
  atFixedRate: Step;
  overload?: Step[];
};
type SystemResults = { date: string; args: Record<string, string>; reports: Report[] };

function report(results: SystemResults, variant: string): Report {
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

const SAMPLED = ['bench/results/system.sampled.json', 'bench/results/system.sampled.run-2.json'] as const;
const VARIANT_LABEL: Record<string, string> = {
  shipped: 'as shipped: tracing to Zipkin (sampled), Prometheus',
  current: 'tracing off',
  cdc: 'every outbox through Debezium (CDC)',
};

export const systemCapacity: FigureTable = {
  sources: SAMPLED,
  render({ read, link }) {
    const runs = SAMPLED.map((path) => read<SystemResults>(path));
    const [first, second] = runs;
    if (!first || !second) throw new Error('system-capacity needs both runs');
    const fixed = first.args['fixed-rate'] ?? '?';
    const offered = (found: Report, index: number) => {
      const step = found.overload?.[index];
      return step ? `${times(step.achievedRate / found.capacity)}, p99 ${num(step.latencyMs.p99)} ms` : '—';
    };
    const rows = ['shipped', 'current'].flatMap((variant) =>
      runs.map((run, index) => {
        const found = report(run, variant);
        return [
          index === 0 ? (VARIANT_LABEL[variant] ?? variant) : '',
          String(index + 1),
          `**${num(found.capacity)}**`,
          cpuAtCapacity(found),
          num(found.atFixedRate.cpuMsPerOrder.total ?? Number.NaN, 1),
          latency(found.atFixedRate),
          offered(found, 0),
          offered(found, 1),
        ];
      }),
    );
    const current = report(first, 'current');
    return [
      table(
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
      '',
      `Revision \`${current.revision}\`, ${day(first.date)}, ${duration(first.args.step)} steps. ` +
        `Run 1: ${link(SAMPLED[0])}, load average ${loadRange(current)} over its steps; ` +
        `run 2, the variants in the other order: ${link(SAMPLED[1])}, ${loadRange(report(second, 'current'))}.`,
    ].join('\n');
  },
};

const POLLING_VS_CDC = 'bench/results/system.polling-vs-cdc.json';

export const systemPollingVsCdc: FigureTable = {
  sources: [POLLING_VS_CDC],
  render({ read, link }) {
    const results = read<SystemResults>(POLLING_VS_CDC);
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
      table(
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
      '',
      `${link(POLLING_VS_CDC)}: revision \`${current.revision}\`, ${day(results.date)}, ${duration(results.args.step)} steps, ` +
        `load average ${loadRange(current)} over the polling steps, ${loadRange(report(results, 'cdc'))} over the CDC ones.`,
    ].join('\n');
  },
};
