import { markdownTableOf } from '@outbox/devstack/table';
import type { Written } from '../../bench/support/environment.ts';
import { resultsFile } from '../../bench/support/results.ts';
import type { MeasuredReport, Step, SystemResults, VariantReport } from '../../bench/system/records.ts';
import { day, duration, loadSpread, loadsOf, num, quietHost, range, sentence, times } from './format.ts';
import { type FigureTable, ofFile, ofRuns } from './types.ts';

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
const loadRange = (found: Report) =>
  loadSpread(found.steps.map((step) => step.loadavg?.[0]).filter((value) => value !== undefined));

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

export const systemCapacity = ofRuns<SystemResults<Report>>(CAPACITY_RUNS, (runs, link) => {
  const fixed = runs[0]?.results.args['fixed-rate'] ?? '?';
  const rows = ['shipped', 'current'].flatMap((name) =>
    runs.map(({ path, results, label }, index) => {
      const found = variant(results, name, path);
      const run = `\`${found.revision}\`, ${day(results.date)}, ${label}`;
      return { name: index === 0 ? (VARIANT_LABEL[name] ?? name) : '', run, found };
    }),
  );
  const sources = runs.map(
    ({ path, results, label }) =>
      `${label}: ${link(path)}, ${duration(results.args.step)} steps, ` +
      `load average ${loadRange(variant(results, 'current', path))} over its steps`,
  );
  return [
    markdownTableOf(rows, {
      variant: ({ name }) => name,
      run: ({ run }) => run,
      'capacity, orders/s': ({ found }) => `**${num(found.capacity)}**`,
      'CPU ms per order at capacity': ({ found }) => cpuAtCapacity(found),
      [`CPU ms per order at ${fixed}/s`]: ({ found }) => num(found.atFixedRate.cpuMsPerOrder.total, 1),
      [`p50 / p99 at ${fixed}/s`]: ({ found }) => latency(found.atFixedRate),
      'offered 1.5× capacity: accepted ÷ capacity': ({ found }) => offeredAt(found, 1.5),
      'offered 2×': ({ found }) => offeredAt(found, 2),
    }),
    sentence(sources),
  ].join('\n\n');
});

const POLLING_VS_CDC = resultsFile('system.polling-vs-cdc.json');

export const systemPollingVsCdc = ofFile<SystemResults<Report>>(POLLING_VS_CDC, (results, link) => {
  const fixed = results.args['fixed-rate'] ?? '?';
  const [current, cdc] = ['current', 'cdc'].map((name) => variant(results, name, POLLING_VS_CDC)) as [
    Report,
    Report,
  ];
  const cpu = (found: Report) => found.atFixedRate.cpuMsPerOrder;
  return [
    markdownTableOf([current, cdc], {
      mode: (found) =>
        found === current ? 'polling (NOTIFY, the default)' : (VARIANT_LABEL.cdc ?? found.variant),
      'capacity, orders/s': (found) => num(found.capacity),
      [`p50 / p99 at ${fixed}/s`]: (found) => latency(found.atFixedRate),
      [`CPU ms per order at ${fixed}/s`]: (found) => num(cpu(found).total, 1),
      'of it PostgreSQL': (found) => num(cpu(found).postgres, 1),
      relays: (found) => num(relaysCpu(cpu(found)), 1),
      Connect: (found) => (cpu(found).connect === undefined ? '—' : num(cpu(found).connect, 1)),
    }),
    `${link(POLLING_VS_CDC)}: revision \`${current.revision}\`, ${day(results.date)}, ${duration(results.args.step)} steps, ` +
      `load average ${loadRange(current)} over the polling steps, ${loadRange(cdc)} over the CDC ones.`,
  ].join('\n\n');
});

const WAL_RUNS = [1, 2].flatMap((run) =>
  (['1gb', '8gb'] as const).map((size) => ({
    run,
    file: resultsFile(`system.max-wal-size-${size}.run-${run}.json`),
  })),
);

/** The server's max_wal_size at its default and eight times it, the same steps, twice each in turn. */
export const maxWalSize: FigureTable = {
  sources: WAL_RUNS.map((run) => run.file),
  render({ read, link }) {
    const runs = WAL_RUNS.map((run) => {
      const results = read<Written<SystemResults>>(run.file);
      return { ...run, results, found: variant(results, 'shipped', run.file) };
    });
    const loadSteps = (found: VariantReport) => [...(found.underload ?? []), ...(found.overload ?? [])];
    // The steps offered `factor` times the capacity given (--capacity), in the order they ran.
    const at = (found: VariantReport, factor: number) =>
      loadSteps(found)
        .filter((step) => step.offeredRate === Math.round((found.capacity ?? 0) * factor))
        .map((step) => num(step.achievedRate))
        .join(', ');
    const loads = loadsOf(runs.map(({ results }) => results));
    const first = runs[0]?.results;
    return [
      markdownTableOf(runs, {
        run: ({ run, file }) => `${run} (${link(file)})`,
        max_wal_size: ({ results }) => results.postgres?.match(/max_wal_size (\S+)/)?.[1] ?? '?',
        'offered 800/s: accepted/s, first and second step': ({ found }) => at(found, 1),
        'offered 1,600/s: accepted/s': ({ found }) => at(found, 2),
        'WAL KiB per order': ({ found }) =>
          range(
            loadSteps(found).map((step) => step.walKiBPerOrder ?? Number.NaN),
            1,
          ),
        'checkpoints in the four steps': ({ found }) =>
          num(loadSteps(found).reduce((sum, step) => sum + (step.checkpoints ?? 0), 0)),
      }),
      `\`bench:system --variants shipped --capacity 800 --factors 1,2,1,2 --fixed-rate 80 --step 20s\`, the two settings in turn, a checkpoint forced before each run: ${day(first?.date ?? '')}, revision \`${first?.run.revision}\`, ${quietHost(first?.machine, loads, 'before and after')}, as shipped; tracing ${first?.run.tracing}.`,
    ].join('\n\n');
  },
};
