import type { ScenarioReport } from '@outbox/chaos';
import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import { type ChaosReport, countsOf, seconds, TOPICS, verdict } from './chaos.ts';
import { day, num } from './format.ts';
import type { FigureTable } from './types.ts';

type Report = ChaosReport & Pick<ScenarioReport, 'timeline'>;

const RUNS = resultsFile('chaos.cdc-cluster-leader-then-connect-kill.json');
/** The exactly-once twin's runs once it started, in a file of their own (`--repeat 2`). */
const EXACTLY_ONCE_RUNS = resultsFile('chaos.cdc-cluster-leader-then-connect-kill-rf2-exactly-once.json');
/** When the exactly-once runs killed Connect, at which revision: the same rule for every run of the file. */
const EXACTLY_ONCE_KILL_TIMING = '5 s after the fencing (`d991564`)';
const BASE = 'cdc-cluster-leader-then-connect-kill';
const SLOTS = ['orders', 'inventory', 'billing'];

/**
 * When each run killed Connect, at which revision, one per run in the file's order: the json does not
 * record the revision, and the rule changed between runs (docs/chaos.md says why).
 */
const KILL_TIMING = [
  'first slot move (`159be83`)',
  'first slot move (`159be83`)',
  'first move after new leaders (`95d7bb4`)',
  '3 s, before the fencing (`6faac7d`)',
  '3 s, before the fencing (`6faac7d`)',
  'first move after the fencing (`350dc67`)',
  '5 s after the fencing (`ee2f36c`)',
  '5 s after the fencing (`aa7cb95`)',
  '5 s after the fencing (`aa7cb95`)',
];

const line = (report: Report, start: string) =>
  report.timeline?.find((entry) => entry.what.startsWith(start))?.what;

/** "19.0 s (leaders at 7.3 s)", from the timeline line of the Connect kill. */
function connectKilled(report: Report): string {
  const kill = line(report, 'kill -9 the Kafka Connect worker');
  const after = kill && /, (\d+) ms after the broker/.exec(kill);
  if (!after) return '– (never started)';
  const leaders = kill ? /new leaders seen at (\d+) ms/.exec(kill) : null;
  const leadersAt = leaders ? ` (leaders at ${seconds(Number(leaders[1]))})` : '';
  return `${seconds(Number(after[1]))}${leadersAt}`;
}

/** Each slot against the offset the restarted worker read, from the timeline's last "seen:" line. */
function slots(report: Report): string {
  const seen = line(report, 'seen: ') ?? '';
  const states = SLOTS.map((slot) => {
    if (new RegExp(`${slot} slot at Connect's committed offset`).test(seen)) return `${slot} at`;
    const behind = new RegExp(`${slot} slot (\\d+) bytes before`).exec(seen);
    return behind ? `${slot} ${num(Number(behind[1]))} behind` : undefined;
  });
  const logged = states.filter((state): state is string => state !== undefined);
  if (logged.length === 0) return '(not recorded)';
  const missing = SLOTS.filter((_, i) => states[i] === undefined);
  if (missing.length === 0) return logged.join(', ');
  return `${logged.join(', ')} (${missing.length === 1 ? missing[0] : 'the others'} not logged)`;
}

function row(report: Report, timing: string): string[] {
  const started = report.startedAt.slice(11, 16);
  const scenario = report.scenario === BASE ? `\`${BASE}\`` : `\`…${report.scenario.slice(BASE.length)}\``;
  if (report.error) {
    return [
      started,
      scenario,
      timing,
      connectKilled(report),
      '–',
      '–',
      '–',
      '**FAIL**: the scenario threw before the load',
    ];
  }
  const published = countsOf(report, 'every-event-published');
  const onTopics = countsOf(report, 'duplicates-reconcile');
  const duplicates = TOPICS.reduce((sum, topic) => sum + (onTopics[`${topic} duplicates`] ?? 0), 0);
  return [
    started,
    scenario,
    timing,
    connectKilled(report),
    `${num(published.outboxRows ?? 0)} / ${num(published.publishedAndOnTopic ?? 0)}`,
    num(duplicates),
    slots(report),
    verdict(report),
  ];
}

/** Rows alike but for their start time (a scenario run twice with the same outcome) share one row. */
function merged(rows: string[][]): string[][] {
  return rows.reduce<string[][]>((out, next) => {
    const last = out.at(-1);
    if (last && last.slice(1).join('|') === next.slice(1).join('|')) last[0] = `${last[0]}, ${next[0]}`;
    else out.push([...next]);
    return out;
  }, []);
}

/** The runs of `cdc-cluster-leader-then-connect-kill` and its `-rf2` twins, one row per run. */
export const cdcClusterLeaderThenConnect: FigureTable = {
  sources: [RUNS, EXACTLY_ONCE_RUNS],
  render({ read, link }) {
    const reports = read<Report[]>(RUNS);
    if (reports.length !== KILL_TIMING.length) {
      throw new Error(`${RUNS} holds ${reports.length} runs; KILL_TIMING names ${KILL_TIMING.length}`);
    }
    const exactlyOnce = read<Report[]>(EXACTLY_ONCE_RUNS);
    return [
      markdownTable(
        [
          'started (UTC)',
          'scenario',
          'kill timing (`revision`)',
          'Connect killed after the broker',
          'outbox rows / on their topics',
          'duplicates on topics',
          "slots at the kill against Connect's committed offsets (bytes of WAL)",
          'verdict',
        ],
        merged([
          ...reports.map((report, index) => row(report, KILL_TIMING[index] ?? '?')),
          ...exactlyOnce.map((report) => row(report, EXACTLY_ONCE_KILL_TIMING)),
        ]),
      ),
      `${link(RUNS)} and ${link(EXACTLY_ONCE_RUNS)}, ${day(reports[0]?.startedAt ?? '')}; each run's timeline, with the load average at the Connect kill, in the report beside it.`,
    ].join('\n\n');
  },
};
