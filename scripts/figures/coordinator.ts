import type { ScenarioReport } from '@outbox/chaos';
import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import { type ChaosReport, onlyReport, seconds } from './chaos.ts';
import { num } from './format.ts';
import type { FigureTable, Results } from './types.ts';

/** A cluster run: the chaos report, its stall verdict and what was left when the wait ended. */
type ClusterReport = ChaosReport &
  Pick<ScenarioReport, 'stall'> & {
    quiescence: Pick<ScenarioReport['quiescence'], 'reached' | 'outstanding'>;
  };
/** One run of a scenario: its results files' common name, how its consumer loop differed, its report's link text. */
type Run = { name: string; loop: string; report: string };

const GROUPS = ['orders', 'inventory', 'billing'];
const json = (run: Run) => resultsFile(`${run.name}.json`);
const md = (run: Run) => resultsFile(`${run.name}.md`);
const sourcesOf = (runs: Run[]) => runs.flatMap((run) => [json(run), md(run)]);

/** The chaos runner writes no load average into its json; whoever ran the scenario wrote it into the report. */
function loadAverage(results: Results, run: Run): string {
  const found = /load average \(1 min\)(?: at the end of the run:)? ([\d.]+)/i.exec(results.text(md(run)));
  if (!found?.[1]) throw new Error(`${md(run)} gives no load average`);
  return found[1];
}

function reportLinks({ link }: Results, run: Run): string {
  return `${link(md(run)).replace(/^\[[^\]]*\]/, `[${run.report}]`)} (${link(json(run)).replace(/^\[[^\]]*\]/, '[json]')})`;
}

function perGroup(report: ClusterReport): string {
  const byGroup: Record<string, number> = report.progress?.longestWithoutApplyingMsByGroup ?? {};
  return GROUPS.map((group) => seconds(byGroup[group])).join(' / ');
}

/** As the chaos report writes it: the slowest order from created to confirmed. */
const decision = (report: ClusterReport) => seconds(report.load.decisionMs?.confirmed.max);

/** What was left to apply when the runner stopped waiting, and the verdict when the run failed. */
function behind(report: ClusterReport): string {
  const left = report.quiescence.outstanding.map((line) => {
    const match = /^(\w+) consumer (\d+) messages behind$/.exec(line);
    return match ? `${match[1]}, ${num(Number(match[2]))} messages` : line;
  });
  const state = report.quiescence.reached
    ? `nothing (quiet ${seconds(report.quiescence.afterLoadMs)} after)`
    : left.join('; ');
  if (report.passed) return state;
  return report.quiescence.reached && report.stall?.withinTarget === false
    ? `${state} (FAIL: over the target)`
    : `${state} (FAIL)`;
}

type Column = [header: string, cell: (report: ClusterReport, results: Results, run: Run) => string];

/** One row per run in the columns given, then where its figures come from. */
function runsTable(runs: Run[], columns: Column[]): FigureTable {
  return {
    sources: sourcesOf(runs),
    render(results) {
      const rows = runs.map((run) => {
        const report = onlyReport(results.read<ClusterReport[]>(json(run)), json(run)) as ClusterReport;
        return columns.map(([, cell]) => cell(report, results, run));
      });
      return [
        markdownTable(
          columns.map(([header]) => header),
          rows,
        ),
        'Windows and order decisions from each run’s json; the load average from its report.',
      ].join('\n\n');
    },
  };
}

const PER_GROUP = 'without an event applied, per group (orders / inventory / billing)';
const DECISION: Column = ['longest order decision', decision];
const LOAD: Column = ['load average (1 min)', (_, results, run) => loadAverage(results, run)];
const REPORT: Column = ['report', (_, results, run) => reportLinks(results, run)];

const KILL_RUNS: Run[] = [
  { name: 'chaos.cluster-coordinator-kill.before', loop: 'as in `bfada78`', report: 'before' },
  {
    name: 'chaos.cluster-coordinator-kill.after',
    loop: 'rejoining on a lost coordinator (`ec90b93`)',
    report: 'after',
  },
  {
    name: 'chaos.cluster-coordinator-kill.after-2',
    loop: 'the same, with the later commits of the seam',
    report: 'after, second run',
  },
  {
    name: 'chaos.cluster-coordinator-kill.after-3',
    loop: 'the same, replacing silent members',
    report: 'after, third run',
  },
];

/** `cluster-coordinator-kill` before and after the consumer loop rejoined on a lost coordinator. */
export const coordinatorKill = runsTable(KILL_RUNS, [
  ['consumer loop', (_, __, run) => run.loop],
  [`longest stretch ${PER_GROUP}`, perGroup],
  DECISION,
  LOAD,
  REPORT,
]);

const FROZEN_RUNS: Run[] = [
  ['before', 'rejoining on a lost coordinator', 'before'],
  ['after', 'the same, replacing members silent for 12 s', 'after'],
  ['after-2', 'the same, a second run', 'after, second run'],
  ['after-3', 'the same, a third run', 'after, third run'],
  ['last-resort-only', 'replacing only after 10 minutes of silence (`83555d1`)', 'run'],
  [
    'relay-timeout-10s',
    "supervision by kafkajs's events, request timeouts of 10 s, the relay's kafkajs retries at 3",
    'run',
  ],
  ['request-timeouts', 'the relay at 5 s with one kafkajs retry, consumers at 10 s (`16286bb`)', 'run'],
  ['request-timeouts-2', 'the same, a second run', 'run'],
  ['relay-timeout-10s-one-retry', 'the relay at 10 s with one kafkajs retry, consumers at 10 s', 'run'],
  ['relay-timeout-10s-final', 'the same, a second run', 'run'],
].map(([suffix, loop, report]) => ({
  name: `chaos.cluster-coordinator-frozen.${suffix}`,
  loop: loop as string,
  report: report as string,
}));

/** `cluster-coordinator-frozen`: each change to the consumer loop and the clients' timeouts, one run each. */
export const coordinatorFrozen = runsTable(FROZEN_RUNS, [
  ['consumer loop and clients', (_, __, run) => run.loop],
  [
    'longest stretch without an event published',
    (report) => seconds(report.progress?.longestWithoutPublishingMs),
  ],
  [PER_GROUP, perGroup],
  DECISION,
  ['behind 120 s after the load', behind],
  LOAD,
  REPORT,
]);
