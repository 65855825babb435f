import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { InvariantResult, ScenarioReport } from '@outbox/chaos';
import { markdownTable } from '@outbox/devstack/table';
import type { Report as KafkaClientsRun } from '../../bench/kafka-clients/report.ts';
import { RESULTS_DIR, resultsFile } from '../../bench/support/results.ts';
import { type ChaosReport, countsOf, onlyReport, sideBySide } from './chaos.ts';
import { day, load, num, times } from './format.ts';
import type { FigureTable, Results } from './types.ts';

// The two Kafka clients side by side: the newest `npm run bench:kafka-clients` run, and the
// failover windows of the two cluster scenarios run with every process on each client
// (`npm run chaos -- cluster-leader-kill --kafka-client X --json bench/results/chaos/chaos.cluster-leader-kill.X-everything.json`).

const CLIENTS = ['kafkajs', 'platformatic'] as const;
type Client = (typeof CLIENTS)[number];

const repoRoot = resolve(import.meta.dirname, '../..');

/** The newest run by the date it records; a path that does not exist when there is none, so the docs say so. */
function newestRun(root = repoRoot): string {
  const folder = join(root, RESULTS_DIR, 'kafka-clients');
  const runs = (existsSync(folder) ? readdirSync(folder) : [])
    .filter((name) => /^kafka-clients\.[\w.-]+\.json$/.test(name))
    .map(resultsFile)
    .map((path) => ({
      path,
      date: (JSON.parse(readFileSync(join(root, path), 'utf8')) as KafkaClientsRun).date,
    }))
    .sort((a, b) => a.date.localeCompare(b.date));
  return runs.at(-1)?.path ?? resultsFile('kafka-clients.<label>.json');
}

const SCENARIOS = [
  'cluster-leader-kill',
  'cluster-coordinator-kill',
  'cluster-coordinator-frozen',
  'cluster-two-brokers-down',
] as const;
const chaosPath = (scenario: string, client: Client) =>
  resultsFile(`chaos.${scenario}.${client}-everything.json`);

/** The scenarios run on both clients with every process switched; a scenario with one side only is left out. */
function failoverRuns(root = repoRoot): string[] {
  return SCENARIOS.filter((scenario) =>
    CLIENTS.every((client) => existsSync(join(root, chaosPath(scenario, client)))),
  ).map(String);
}

/** A failover run: the chaos report, its stall verdict and each invariant's violations. */
type FailoverReport = Omit<ChaosReport, 'invariants'> &
  Pick<ScenarioReport, 'stall'> & {
    invariants: (ChaosReport['invariants'][number] & Pick<InvariantResult, 'violations'>)[];
  };

/** A chaos results file: the runner's array, or a hand-written record around it (`report`). */
function chaosReport(results: Results, path: string): FailoverReport {
  const data = results.read<FailoverReport[] | { report: FailoverReport[] }>(path);
  return onlyReport(Array.isArray(data) ? data : data.report, path) as FailoverReport;
}

function failoverRows(results: Results, scenario: string): string[][] {
  // platformatic's windows beside kafkajs', and its ÷ kafkajs'.
  const runs = CLIENTS.map((client) => chaosReport(results, chaosPath(scenario, client)));
  const { window, row, stall } = sideBySide(scenario, runs as [FailoverReport, FailoverReport]);
  const count = (report: FailoverReport, key: string) =>
    num(countsOf(report, 'no-lost-or-ghost-orders')[key] ?? 0);
  const twice = (report: FailoverReport) => {
    const found = report.invariants.find((invariant) => invariant.name === 'applied-exactly-once');
    return found?.passed ? '0' : `**${num(found?.violations.length ?? 1)}**`;
  };
  return [
    window('longest stretch without an event published', (r) => r.progress?.longestWithoutPublishingMs),
    window('longest stretch without an event applied', (r) => r.progress?.longestWithoutApplyingMs),
    window('longest order decision', (r) => r.load.decisionMs?.confirmed.max),
    stall(),
    row(
      'events lost / invented / applied twice',
      (r) => `${count(r, 'lost')} / ${count(r, 'ghost')} / ${twice(r)}`,
    ),
    row('every invariant', (r) => (r.passed ? 'held' : '**broken**')),
  ];
}

/** Throughput and CPU per event from the bench, the failover windows from the chaos runs. */
export function kafkaClientsTable(root = repoRoot): FigureTable {
  const run = newestRun(root);
  const scenarios = failoverRuns(root);
  return {
    sources: [run, ...scenarios.flatMap((scenario) => CLIENTS.map((client) => chaosPath(scenario, client)))],
    render(results) {
      const bench = results.read<KafkaClientsRun>(run);
      const rows = bench.metrics.map((metric) => [
        metric.label,
        num(metric.byClient.kafkajs.median, metric.byClient.kafkajs.median >= 100 ? 0 : 3),
        num(metric.byClient.platformatic.median, metric.byClient.platformatic.median >= 100 ? 0 : 3),
        times(metric.ratio.median),
      ]);
      const failovers = scenarios.flatMap((scenario) => failoverRows(results, scenario));
      const chaosNote =
        scenarios.length === 0
          ? 'No failover run with every process on each client yet (`npm run chaos -- cluster-leader-kill --kafka-client X`).'
          : `Failover windows: ${scenarios
              .flatMap((scenario) => CLIENTS.map((client) => results.link(chaosPath(scenario, client))))
              .join(', ')}, each a single run of its scenario.`;
      return [
        markdownTable(
          ['', 'kafkajs', '@platformatic/kafka', 'platformatic ÷ kafkajs'],
          [...rows, ...failovers],
        ),
        `Throughput and CPU: ${results.link(run)} (label \`${bench.label}\`), ${bench.parameters.rounds} rounds, ` +
          `revision \`${bench.revision ?? 'unknown'}\`, ${day(bench.date)}, ${load(bench.loadavgBefore, bench.loadavgAfter)}; ` +
          'medians over rounds, the ratio paired per round. ' +
          chaosNote,
      ].join('\n\n');
    },
  };
}

export const kafkaClients = kafkaClientsTable();
