import { markdownTable, markdownTableOf } from '@outbox/devstack/table';
import type { Written } from '../../bench/support/environment.ts';
import { resultsFile } from '../../bench/support/results.ts';
import type { Step, SystemResults } from '../../bench/system/records.ts';
import { peakAccepted, targetsTable } from '../../bench/system/targets.ts';
import { day, num, quietHost } from './format.ts';
import { atCapacity } from './system.ts';
import { type FigureTable, ofFile } from './types.ts';

/** The run that measures the performance targets against a reference revision, as shipped. */
const TARGETS_RUN = resultsFile('system.targets.json');

/** A targets run is given --reference: its flags name the reference variant. */
type TargetsResults = Written<SystemResults> & { args: { reference: string; 'variant-env'?: string[] } };

/** "shipped-linger25 with RELAY_LINGER_MS=25, KAFKA_CHUNK_LINGER_MS=25": each named variant's settings. */
function variantSettings(results: TargetsResults): string {
  const settings = new Map<string, string[]>();
  for (const spec of results.args['variant-env'] ?? []) {
    const at = spec.indexOf(':');
    const name = spec.slice(0, at);
    settings.set(name, [...(settings.get(name) ?? []), `\`${spec.slice(at + 1)}\``]);
  }
  return [...settings].map(([name, list]) => `, ${name} with ${list.join(', ')}`).join('');
}

/** Where the run took place and how, under each of its tables. */
function source(results: TargetsResults, link: (path: string) => string, run = TARGETS_RUN): string {
  const loads = results.reports.flatMap((r) =>
    [...r.steps, ...(r.underload ?? []), ...(r.overload ?? [])].map((s) => s.loadavg[0] ?? 0),
  );
  return (
    `${link(run)}: ${day(results.date)}, ${quietHost(results.machine, loads, 'at the ends of its steps')}, ` +
    `steps of ${results.args.step}, the fixed rate ${results.args['fixed-rate']} orders/s ${fixedRateWhen(results)}, ` +
    `${results.reports.length === 2 ? 'both variants' : 'every variant'} as shipped${variantSettings(results)}, tracing ${results.run.tracing}.`
  );
}

/** When the run measured its fixed rate: first, on the stack as every variant starts, or last. */
function fixedRateWhen(results: TargetsResults): string {
  return results.reports.every((r) => r.fixedRateAt === 'start')
    ? 'measured right after the warm-up, before any other step (and again after the others, in parentheses)'
    : 'measured after every other step';
}

/** The targets, each variant against the reference of the run (bench/system/targets.ts decides). */
const targetsOf = (run: string) =>
  ofFile<TargetsResults>(run, (results, link) =>
    [targetsTable(results.reports, results.args.reference).join('\n'), source(results, link, run)].join(
      '\n\n',
    ),
  );

/**
 * The bench:system runs the docs show, by figure id: each as its targets (`<id>`) and as a line per
 * variant (`<id>-summary`).
 */
const RUNS: Record<string, string> = {
  // The reference beside today's code, as shipped.
  'performance-targets': 'system.targets.json',
  // The same on a faster host of the same kind, twice, the variants in opposite orders.
  'performance-targets-run-2': 'system.targets.run-2.json',
  'performance-targets-run-3': 'system.targets.run-3.json',
  // With 25 and 50 ms of linger at every hop.
  'performance-targets-lingers': 'system.targets-lingers.json',
  // The waits on by default.
  'performance-targets-run-4': 'system.targets.run-4.json',
  // With group commit, on a slower host; then today's code first.
  'performance-targets-run-5': 'system.targets.run-5.json',
  'performance-targets-run-6': 'system.targets.run-6.json',
  // One statement per batch, beside the revision before it; then today's code first.
  'performance-targets-run-7': 'system.targets.run-7.json',
  'performance-targets-run-8': 'system.targets.run-8.json',
  // The queue's expected wait on the recent time of the work, then on its typical time.
  'admission-typical': 'system.admission-typical.json',
  // Today's code alone with the server's autovacuum on; then the targets so.
  'autovacuum-on': 'system.autovacuum-on.json',
  'performance-targets-run-9': 'system.targets.run-9.json',
  // On an Intel host, autovacuum on: before and after the refusal on arrival.
  'performance-targets-run-10': 'system.targets.run-10.json',
  'refuse-on-arrival-run-1': 'system.refuse-on-arrival.run-1.json',
  'refuse-on-arrival-run-2': 'system.refuse-on-arrival.run-2.json',
  'performance-targets-run-11': 'system.targets.run-11.json',
  // How many orders may be in flight at once (the admission slots), side by side; then the targets.
  'admission-slots-run-1': 'system.admission-slots.run-1.json',
  'admission-slots-run-2': 'system.admission-slots.run-2.json',
  'admission-slots-run-3': 'system.admission-slots.run-3.json',
  'admission-slots-run-4': 'system.admission-slots.run-4.json',
  'performance-targets-run-12': 'system.targets.run-12.json',
  // Traced and untraced, side by side, twice the capacity offered.
  'tracing-at-overload-run-1': 'system.tracing-at-overload.run-1.json',
  'tracing-at-overload-run-2': 'system.tracing-at-overload.run-2.json',
  // On an AMD host: the targets as found; a refusal without a span, side by side; then the targets.
  'performance-targets-run-13': 'system.targets.run-13.json',
  'untraced-refusals-run-1': 'system.untraced-refusals.run-1.json',
  'untraced-refusals-run-2': 'system.untraced-refusals.run-2.json',
  'performance-targets-run-14': 'system.targets.run-14.json',
  // The fixed rate measured first, on the stack as every variant starts.
  'performance-targets-run-15': 'system.targets.run-15.json',
  // With the orders' write linger.
  'performance-targets-run-16': 'system.targets.run-16.json',
  // With the refusal at the front door, on a slower host.
  'performance-targets-run-17': 'system.targets.run-17.json',
  // The same code and host an hour later, with the load generator's cheaper timer.
  'performance-targets-run-18': 'system.targets.run-18.json',
  // On an Intel host, the reference keeping up with the fixed rate.
  'performance-targets-run-19': 'system.targets.run-19.json',
  // The consumers' wait after the transaction, on the same host.
  'performance-targets-run-20': 'system.targets.run-20.json',
  // The same again, today's code first.
  'performance-targets-run-21': 'system.targets.run-21.json',
  // On a faster AMD host, where the reference keeps up with 275 a second; then today's code first.
  'performance-targets-run-22': 'system.targets.run-22.json',
  'performance-targets-run-23': 'system.targets.run-23.json',
  // The same host with the steps of a minute the definition asks for.
  'performance-targets-run-24': 'system.targets.run-24.json',
  'performance-targets-run-25': 'system.targets.run-25.json',
  // With 75 ms at every hop: a run whose POST answers stalled, then today's code first.
  'performance-targets-run-26': 'system.targets.run-26.json',
  'performance-targets-run-27': 'system.targets.run-27.json',
};

export const TARGETS_FIGURES: Record<string, FigureTable> = Object.fromEntries(
  Object.entries(RUNS).flatMap(([id, name]) => {
    const run = resultsFile(name);
    return [
      [id, targetsOf(run)],
      [`${id}-summary`, summaryOf(run)],
    ];
  }),
);

/** The two revisions before today's, side by side in one run: where the reference lost its capacity. */
export const bfada78Vs400e20f: FigureTable = summaryOf(resultsFile('system.bfada78-vs-400e20f.json'));

function summaryOf(run: string): FigureTable {
  return ofFile<TargetsResults>(run, (results, link) => {
    const fixed = results.args['fixed-rate'];
    return [
      markdownTableOf(results.reports, {
        'code, as shipped': (r) => `${r.variant} (\`${r.revision}\`)`,
        'capacity, orders/s': (r) => `**${num(r.capacity)}**`,
        'peak accepted/s': (r) => num(peakAccepted(r), 1),
        'CPU ms per order at capacity': (r) => num(atCapacity(r)?.cpuMsPerOrder.total, 1),
        [`CPU ms per order at ${fixed}/s`]: (r) =>
          num(r.atFixedRate?.cpuMsPerOrder.total, 1) +
          (r.atFixedRateAfterSearch ? ` (${num(r.atFixedRateAfterSearch.cpuMsPerOrder.total, 1)})` : ''),
        'p50 / p99 at half capacity': ({ atHalfCapacity: half }) =>
          half ? `${num(half.latencyMs.p50)} / ${num(half.latencyMs.p99)} ms` : '—',
        'offered 2× capacity: accepted/s': (r) => {
          const twice = r.overload?.at(-1);
          return twice
            ? `${num(twice.offeredRate)} → ${num(twice.achievedRate, 1)}, ${num(twice.shed ?? 0)} shed`
            : '—';
        },
      }),
      source(results, link, run),
    ].join('\n\n');
  });
}

/** CPU ms per order at the fixed rate, per process: where a low rate's cost goes. */
export const performanceTargetsProcesses = ofFile<TargetsResults>(TARGETS_RUN, (results, link) => {
  const processes = [
    ...new Set(results.reports.flatMap((r) => Object.keys(r.atFixedRate?.cpuMsPerOrder ?? {}))),
  ].filter((name) => name !== 'total');
  const cell = (step: Step | undefined, name: string) => num(step?.cpuMsPerOrder[name], 2);
  return [
    markdownTable(
      [
        'process',
        ...results.reports.flatMap((r) => [
          `${r.variant} at ${results.args['fixed-rate']}/s`,
          `${r.variant} at capacity`,
        ]),
      ],
      [...processes, 'total'].map((name) => [
        name,
        ...results.reports.flatMap((r) => [cell(r.atFixedRate, name), cell(atCapacity(r), name)]),
      ]),
    ),
    source(results, link),
  ].join('\n\n');
});
