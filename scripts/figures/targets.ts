import { markdownTable, markdownTableOf } from '@outbox/devstack/table';
import type { Written } from '../../bench/support/environment.ts';
import { resultsFile } from '../../bench/support/results.ts';
import type { Step, SystemResults } from '../../bench/system/records.ts';
import { peakAccepted, targetsTable } from '../../bench/system/targets.ts';
import { day, num } from './format.ts';
import { atCapacity } from './system.ts';
import type { FigureTable } from './types.ts';

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
    `${link(run)}: ${day(results.date)}, ${results.machine.cpuModel} ${results.machine.cpus} vCPU, ` +
    `nothing else running (load average ${num(Math.min(...loads), 1)}–${num(Math.max(...loads), 1)} at the ends of its steps), ` +
    `steps of ${results.args.step}, the fixed rate ${results.args['fixed-rate']} orders/s, ` +
    `${results.reports.length === 2 ? 'both variants' : 'every variant'} as shipped${variantSettings(results)}, tracing ${results.run.tracing}.`
  );
}

/** The same targets at a later revision on a faster host of the same kind, twice, the variants in opposite orders. */
const TARGETS_RUN_2 = resultsFile('system.targets.run-2.json');
const TARGETS_RUN_3 = resultsFile('system.targets.run-3.json');

/** The targets, each variant against the reference of the run (bench/system/targets.ts decides). */
function targetsOf(run: string): FigureTable {
  return {
    sources: [run],
    render({ read, link }) {
      const results = read<TargetsResults>(run);
      return [
        targetsTable(results.reports, results.args.reference).join('\n'),
        source(results, link, run),
      ].join('\n\n');
    },
  };
}

export const performanceTargets: FigureTable = targetsOf(TARGETS_RUN);
export const performanceTargetsRun2: FigureTable = targetsOf(TARGETS_RUN_2);
export const performanceTargetsRun3: FigureTable = targetsOf(TARGETS_RUN_3);

/** A run's two tables: its targets (targetsOf) and each variant in a line (summaryOf). */
function tablesOf(name: string): { targets: FigureTable; summary: FigureTable } {
  const run = resultsFile(name);
  return { targets: targetsOf(run), summary: summaryOf(run) };
}

/** The reference beside today's code with 25 and 50 ms of linger at every hop. */
export const { targets: performanceTargetsLingers, summary: performanceTargetsSummaryLingers } = tablesOf(
  'system.targets-lingers.json',
);
/** The reference beside today's code as shipped, the waits on by default. */
export const { targets: performanceTargetsRun4, summary: performanceTargetsSummaryRun4 } =
  tablesOf('system.targets.run-4.json');
/** The reference beside today's code with group commit, on a slower host of the same kind. */
export const { targets: performanceTargetsRun5, summary: performanceTargetsSummaryRun5 } =
  tablesOf('system.targets.run-5.json');
/** The same on the same host, today's code first. */
export const performanceTargetsRun6: FigureTable = targetsOf(resultsFile('system.targets.run-6.json'));
/** The same with one statement per batch, beside the revision before it. */
export const { targets: performanceTargetsRun7, summary: performanceTargetsSummaryRun7 } =
  tablesOf('system.targets.run-7.json');
/** Once more on the same host, faster that hour, today's code first. */
export const { targets: performanceTargetsRun8, summary: performanceTargetsSummaryRun8 } =
  tablesOf('system.targets.run-8.json');
/** The queue's expected wait on the recent time of the work, then on its typical time, side by side. */
export const { targets: admissionTypical, summary: admissionTypicalSummary } = tablesOf(
  'system.admission-typical.json',
);
/** Today's code alone, with the server's autovacuum on. */
export const { targets: autovacuumOn, summary: autovacuumOnSummary } = tablesOf('system.autovacuum-on.json');
/** The targets with autovacuum on, the reference first. */
export const { targets: performanceTargetsRun9, summary: performanceTargetsSummaryRun9 } =
  tablesOf('system.targets.run-9.json');

/** Each variant in a line: capacity, peak, CPU per order, latency, what it refused at twice its capacity. */
export const performanceTargetsSummary: FigureTable = summaryOf(TARGETS_RUN);
export const performanceTargetsSummaryRun2: FigureTable = summaryOf(TARGETS_RUN_2);
export const performanceTargetsSummaryRun3: FigureTable = summaryOf(TARGETS_RUN_3);

/** The two revisions before today's, side by side in one run: where the reference lost its capacity. */
export const bfada78Vs400e20f: FigureTable = summaryOf(resultsFile('system.bfada78-vs-400e20f.json'));

function summaryOf(run: string): FigureTable {
  return {
    sources: [run],
    render({ read, link }) {
      const results = read<TargetsResults>(run);
      const fixed = results.args['fixed-rate'];
      return [
        markdownTableOf(results.reports, {
          'code, as shipped': (r) => `${r.variant} (\`${r.revision}\`)`,
          'capacity, orders/s': (r) => `**${num(r.capacity)}**`,
          'peak accepted/s': (r) => num(peakAccepted(r), 1),
          'CPU ms per order at capacity': (r) => num(atCapacity(r)?.cpuMsPerOrder.total, 1),
          [`CPU ms per order at ${fixed}/s`]: (r) => num(r.atFixedRate?.cpuMsPerOrder.total, 1),
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
    },
  };
}

/** CPU ms per order at the fixed rate, per process: where a low rate's cost goes. */
export const performanceTargetsProcesses: FigureTable = {
  sources: [TARGETS_RUN],
  render({ read, link }) {
    const results = read<TargetsResults>(TARGETS_RUN);
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
  },
};
