import type { ScenarioReport } from '@outbox/chaos';
import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import { type ChaosReport, countsOf, duplicateCounts, seconds, TOPICS, verdict } from './chaos.ts';
import { num } from './format.ts';
import type { FigureTable } from './types.ts';

/** A CDC run: the chaos report, what published the outboxes and, where a fault was restored, the time to recover. */
type CdcReport = ChaosReport &
  Pick<ScenarioReport, 'relayMode'> & { quiescence: Pick<ScenarioReport['quiescence'], 'recoveryMs'> };

/** `npm run chaos -- cdc`: every scenario of the group run. */
const GROUP = resultsFile('chaos.cdc.json');
/** Progress figures the text below the table explains instead: the group run's sampling got this one wrong. */
const GROUP_PROGRESS_NOTE: Record<string, string> = { 'cdc-broker-kill-9': 'see below' };
/** Scenarios run again on their own after the group run, each named by its revision. */
const SINGLE_RUNS = [
  { path: resultsFile('chaos.cdc-connector-task-failed.json'), label: '(`681d746`, its test)' },
  { path: resultsFile('chaos.cdc-broker-kill-9.json'), label: '(`ac8ac5c`)' },
];
const SOURCES = [GROUP, ...SINGLE_RUNS.map((run) => run.path)];

function row(report: CdcReport, label: string | undefined, progress: string | undefined): string[] {
  const scenario = `\`${report.scenario}\`${label ? ` ${label}` : ''}`;
  if (report.error) {
    return [
      scenario,
      report.relayMode,
      verdict(report),
      '– (the scenario threw)',
      ...Array(7).fill('–'),
      seconds(report.durationMs),
    ];
  }
  const counts = countsOf(report, 'duplicates-reconcile');
  const perTopic = TOPICS.map((topic) => counts[`${topic} duplicates`] ?? 0);
  const { messages, duplicates, byConsumer } = duplicateCounts(report);
  return [
    scenario,
    report.relayMode,
    verdict(report),
    `${report.load.accepted} / ${report.load.sent}`,
    num(report.load.retries),
    messages,
    `${duplicates} (${perTopic.map((count) => num(count)).join(' / ')})`,
    byConsumer,
    progress ??
      `${seconds(report.progress?.longestWithoutPublishingMs)} / ${seconds(report.progress?.longestWithoutApplyingMs)}`,
    seconds(report.quiescence.afterLoadMs),
    seconds(report.quiescence.recoveryMs),
    seconds(report.durationMs),
  ];
}

/** `npm run chaos -- cdc`, one row per scenario, and the scenarios run again on their own after it. */
export const chaosCdc: FigureTable = {
  sources: SOURCES,
  render({ read, link }) {
    const rows = [
      ...read<CdcReport[]>(GROUP).map((report) =>
        row(report, undefined, GROUP_PROGRESS_NOTE[report.scenario]),
      ),
      ...SINGLE_RUNS.flatMap((run) =>
        read<CdcReport[]>(run.path).map((report) => row(report, run.label, undefined)),
      ),
    ];
    return [
      markdownTable(
        [
          'scenario',
          'relay',
          'verdict',
          'orders accepted / sent',
          'client retries',
          'messages on topics',
          'duplicates on topics (order / reservation / payment)',
          "consumers' own duplicate counters (inventory / billing / orders)",
          'nothing published / applied for at most',
          'quiet after load',
          'recovery',
          'whole run',
        ],
        rows,
      ),
      `${SOURCES.map((path) => link(path)).join(', ')}.`,
    ].join('\n\n');
  },
};

/** One run of a scenario in a results file, and the revision it ran at. */
type Run = { path: string; scenario: string; revision: string };
const run = (file: string, scenario: string, revision: string): Run => ({
  path: resultsFile(`chaos.${file}.json`),
  scenario,
  revision,
});
const POLLING = 'cdc-polling';
const EARLIER = 'cdc.earlier-runs';

/** What each publisher re-sent under its fault: rows of one or several runs, their figures joined with " / ". */
const DUPLICATE_ROWS: { publisher: string; fault: string; runs: Run[] }[] = [
  {
    publisher: 'polling relays',
    fault: '`broker-kill-9`',
    runs: [run(POLLING, 'broker-kill-9', '`681d746`')],
  },
  {
    publisher: 'polling relays',
    fault: '`relay-kill-9` (each relay, mid-batch)',
    runs: [run(POLLING, 'relay-kill-9', '`681d746`')],
  },
  ...[
    ['`cdc-connect-kill-9`', 'cdc', '`5c087c2`'],
    ['`cdc-connect-kill-9`', EARLIER, '`cfadc1e` (earlier)'],
    ['`cdc-connect-kill-9`, its CI test', 'cdc-connect-kill-9', '`ac8ac5c` (later)'],
  ].map(([fault, file, revision]) => ({
    publisher: 'Debezium (at least once)',
    fault: fault as string,
    runs: [run(file as string, 'cdc-connect-kill-9', revision as string)],
  })),
  ...[
    ['cdc', '`5c087c2`'],
    [EARLIER, '`cfadc1e` (earlier)'],
    ['cdc-connect-kill-9-exactly-once', '`ac8ac5c` (later)'],
  ].map(([file, revision]) => ({
    publisher: 'Debezium with exactly-once source',
    fault: '`cdc-connect-kill-9-exactly-once`',
    runs: [run(file as string, 'cdc-connect-kill-9-exactly-once', revision as string)],
  })),
  {
    publisher: 'Debezium (at least once)',
    fault: '`cdc-broker-kill-9`',
    runs: [
      run('cdc', 'cdc-broker-kill-9', '`5c087c2`'),
      run('cdc-broker-kill-9', 'cdc-broker-kill-9', '`ac8ac5c`'),
      run(EARLIER, 'cdc-broker-kill-9', '`cfadc1e`'),
    ],
  },
];
const DUPLICATE_SOURCES = [...new Set(DUPLICATE_ROWS.flatMap((row) => row.runs.map((one) => one.path)))];

/** Copies beyond the first on the event topics: polling relays against Debezium, with and without exactly-once. */
export const cdcDuplicates: FigureTable = {
  sources: DUPLICATE_SOURCES,
  render({ read, link }) {
    const report = ({ path, scenario }: Run) => {
      const found = read<CdcReport[]>(path).find((one) => one.scenario === scenario);
      if (!found) throw new Error(`no ${scenario} in ${path}`);
      return duplicateCounts(found);
    };
    const rows = DUPLICATE_ROWS.map(({ publisher, fault, runs }) => {
      const counts = runs.map(report);
      return [
        publisher,
        fault,
        runs.map((one) => one.revision).join(' / '),
        counts.map((count) => count.messages).join(' / '),
        counts.map((count) => count.duplicates).join(' / '),
      ];
    });
    return [
      markdownTable(['what publishes', 'fault', 'run', 'messages on topics', 'duplicates on topics'], rows),
      `${DUPLICATE_SOURCES.map((path) => link(path)).join(', ')}.`,
    ].join('\n\n');
  },
};
