import type { ScenarioReport } from '@outbox/chaos';
import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import { type ChaosReport, countsOf as counts, seconds, verdict, when } from './chaos.ts';
import { num } from './format.ts';
import type { FigureTable } from './types.ts';

/** What `npm run chaos -- compose` writes: the chaos report, with the host and the window by group. */
type ComposeChaosReport = ChaosReport & Pick<ScenarioReport, 'revision' | 'machine' | 'run'>;

const COMPOSE = resultsFile('chaos.compose.json');

/** Every scenario of the compose run: its verdict, what was lost or doubled, and the longest stall. */
export const chaosCompose: FigureTable = {
  sources: [COMPOSE],
  render({ read, link }) {
    const reports = read<ComposeChaosReport[]>(COMPOSE);
    const rows = reports.map((report) => {
      const orders = counts(report, 'no-lost-or-ghost-orders');
      const duplicates = Object.entries(counts(report, 'duplicates-reconcile'))
        .filter(([name]) => name.endsWith('events duplicates'))
        .reduce((sum, [, value]) => sum + value, 0);
      const [group, stall] = Object.entries(report.progress?.longestWithoutApplyingMsByGroup ?? {}).reduce(
        (worst, entry) => (entry[1] > worst[1] ? entry : worst),
        ['—', 0] as [string, number],
      );
      return [
        `\`${report.scenario}\``,
        verdict(report),
        `${num(report.load.accepted)} / ${num(report.load.sent)}`,
        num(orders.lost ?? 0),
        num(orders.ghost ?? 0),
        num(duplicates),
        `${seconds(stall)} (${group})`,
        seconds(report.quiescence.afterLoadMs),
        num(report.machine?.loadAverage[0] ?? 0, 1),
      ];
    });
    const first = reports[0];
    return [
      markdownTable(
        [
          'scenario',
          'verdict',
          'orders accepted / sent',
          'lost',
          'ghost',
          'duplicate messages',
          'longest without an applied event (group)',
          'quiet after the load',
          'load average (1 min, at the end)',
        ],
        rows,
      ),
      `${link(COMPOSE)}: revision \`${first?.revision ?? 'unknown'}\`, ${first?.machine?.cpu ?? 'unknown CPU'}, ` +
        `${first?.machine?.cores ?? '?'} cores, started ${when(first)}, ` +
        `tracing ${first?.run?.tracing ?? 'not recorded'}.`,
    ].join('\n\n');
  },
};
