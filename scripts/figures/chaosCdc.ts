import { type ChaosReport, duplicateCounts, seconds } from './chaos.ts';
import { num, table } from './format.ts';
import type { FigureTable } from './types.ts';

type CdcReport = ChaosReport & { relayMode: string; quiescence: { recoveryMs?: number | null } };

/**
 * The CDC runs of docs/chaos.md: every scenario of the group run, then the single runs that followed it.
 * `label` names a single run's revision; `progress` replaces a progress figure the text below the
 * table explains instead (one the group run's sampling got wrong).
 */
const RUNS: { path: string; scenario?: string; label?: string; progress?: string }[] = [
  { path: 'bench/results/chaos.cdc.json', scenario: 'cdc-broker-kill-9', progress: 'see below' },
  { path: 'bench/results/chaos.cdc-connector-task-failed.json', label: '(`681d746`, its test)' },
  { path: 'bench/results/chaos.cdc-broker-kill-9.json', label: '(`ac8ac5c`)' },
];
const GROUP = 'bench/results/chaos.cdc.json';
const SOURCES = [...new Set(RUNS.map((run) => run.path))];
const TOPICS = ['order.events', 'reservation.events', 'payment.events'];

function row(report: CdcReport, label: string | undefined, progress: string | undefined): string[] {
  const scenario = `\`${report.scenario}\`${label ? ` ${label}` : ''}`;
  const verdict = report.passed ? 'pass' : '**FAIL**';
  if (report.error) {
    return [
      scenario,
      report.relayMode,
      verdict,
      '– (the scenario threw)',
      ...Array(7).fill('–'),
      seconds(report.durationMs),
    ];
  }
  const counts =
    report.invariants.find((invariant) => invariant.name === 'duplicates-reconcile')?.counts ?? {};
  const perTopic = TOPICS.map((topic) => counts[`${topic} duplicates`] ?? 0);
  const { messages, duplicates, byConsumer } = duplicateCounts(report);
  return [
    scenario,
    report.relayMode,
    verdict,
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
    const group = read<CdcReport[]>(GROUP);
    const special = (path: string, scenario: string) =>
      RUNS.find((run) => run.path === path && run.scenario === scenario);
    const rows = [
      ...group.map((report) => row(report, undefined, special(GROUP, report.scenario)?.progress)),
      ...RUNS.filter((run) => run.path !== GROUP).flatMap((run) =>
        read<CdcReport[]>(run.path).map((report) => row(report, run.label, run.progress)),
      ),
    ];
    return [
      table(
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
      '',
      SOURCES.map((path) => link(path)).join(', ') + '.',
    ].join('\n');
  },
};
