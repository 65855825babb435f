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

/** `targets.run-<first>` … `targets.run-<last>`: a series of runs of one kind. */
const numbered = (name: string, first: number, last: number) =>
  Array.from({ length: last - first + 1 }, (_, i) => `${name}.run-${first + i}`);

/**
 * The bench:system runs the docs show (`system.<name>.json`), each as its targets and as a line per
 * variant (`-summary`), under the id its name gives: dots as dashes, `targets` as
 * `performance-targets` (`system.targets.run-2.json` is `performance-targets-run-2`). What sets a
 * run apart is said beside its tables in the docs.
 */
const RUNS = [
  'targets',
  'targets-lingers',
  'admission-typical',
  'autovacuum-on',
  ...numbered('targets', 2, 27),
  ...numbered('refuse-on-arrival', 1, 2),
  ...numbered('admission-slots', 1, 4),
  ...numbered('tracing-at-overload', 1, 2),
  ...numbered('untraced-refusals', 1, 2),
];

export const TARGETS_FIGURES: Record<string, FigureTable> = Object.fromEntries(
  RUNS.flatMap((name) => {
    const id = name.replace(/^targets/, 'performance-targets').replaceAll('.', '-');
    const run = resultsFile(`system.${name}.json`);
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
