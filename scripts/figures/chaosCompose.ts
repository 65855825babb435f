import type { ScenarioReport } from '@outbox/chaos';
import { markdownTableOf } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import { type ChaosReport, countsOf as counts, seconds, verdict, when } from './chaos.ts';
import { num } from './format.ts';
import { ofFile } from './types.ts';

/** What `npm run chaos -- compose` writes: the chaos report, with the host and the window by group. */
type ComposeChaosReport = ChaosReport & Pick<ScenarioReport, 'revision' | 'machine' | 'run'>;

const COMPOSE = resultsFile('chaos.compose.json');

/** Every scenario of the compose run: its verdict, what was lost or doubled, and the longest stall. */
export const chaosCompose = ofFile<ComposeChaosReport[]>(COMPOSE, (reports, link) => {
  const duplicates = (report: ComposeChaosReport) =>
    Object.entries(counts(report, 'duplicates-reconcile'))
      .filter(([name]) => name.endsWith('events duplicates'))
      .reduce((sum, [, value]) => sum + value, 0);
  /** The group that stood still longest, and for how long. */
  const stall = (report: ComposeChaosReport) => {
    const [group, ms] = Object.entries(report.progress?.longestWithoutApplyingMsByGroup ?? {}).reduce(
      (worst, entry) => (entry[1] > worst[1] ? entry : worst),
      ['—', 0] as [string, number],
    );
    return `${seconds(ms)} (${group})`;
  };
  const orders = (report: ComposeChaosReport, key: string) =>
    num(counts(report, 'no-lost-or-ghost-orders')[key] ?? 0);
  const first = reports[0];
  return [
    markdownTableOf(reports, {
      scenario: (report) => `\`${report.scenario}\``,
      verdict,
      'orders accepted / sent': (report) => `${num(report.load.accepted)} / ${num(report.load.sent)}`,
      lost: (report) => orders(report, 'lost'),
      ghost: (report) => orders(report, 'ghost'),
      'duplicate messages': (report) => num(duplicates(report)),
      'longest without an applied event (group)': stall,
      'quiet after the load': (report) => seconds(report.quiescence.afterLoadMs),
      'load average (1 min, at the end)': (report) => num(report.machine?.loadAverage[0] ?? 0, 1),
    }),
    `${link(COMPOSE)}: revision \`${first?.revision ?? 'unknown'}\`, ${first?.machine?.cpu ?? 'unknown CPU'}, ` +
      `${first?.machine?.cores ?? '?'} cores, started ${when(first)}, ` +
      `tracing ${first?.run?.tracing ?? 'not recorded'}.`,
  ].join('\n\n');
});
