import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PartitionFigure as MemberFigure, ScenarioReport } from '@outbox/chaos';
import { markdownTable } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import { type ChaosReport, countsOf, onlyReport, seconds, sideBySide, when } from './chaos.ts';
import { day, loadSpread, num } from './format.ts';
import type { FigureTable, Results } from './types.ts';

// The two consumer group protocols side by side: the cluster scenarios with every process on
// @platformatic/kafka and every consumer on each protocol, run one after the other
// (`npm run chaos -- <scenario> --kafka-client platformatic --group-protocol X
//  --json bench/results/chaos/chaos.<scenario>.platformatic-X.json`).

const PROTOCOLS = ['classic', 'consumer'] as const;
type Protocol = (typeof PROTOCOLS)[number];

const repoRoot = resolve(import.meta.dirname, '../..');
const SCENARIOS = [
  'cluster-leader-kill',
  'cluster-coordinator-kill',
  'cluster-coordinator-frozen',
  'cluster-two-brokers-down',
  // A member killed with kill -9: its partitions wait for its session to time out, or its return.
  'cluster-consumer-failover',
  // One instance of each service restarted after the other: do the partitions its twin keeps stop?
  'cluster-service-rolling-restart',
] as const;
const chaosPath = (scenario: string, protocol: Protocol) =>
  resultsFile(`chaos.${scenario}.platformatic-${protocol}.json`);

/** A run on one protocol: the chaos report, its figure per member where the scenario measured them, its stall verdict and its run record. */
type ProtocolReport = ChaosReport & Pick<ScenarioReport, 'partitionWindows' | 'stall' | 'run'>;

/** The scenarios run on both protocols; a scenario with one side only is left out. */
function pairedScenarios(): string[] {
  return SCENARIOS.filter((scenario) =>
    PROTOCOLS.every((protocol) => existsSync(join(repoRoot, chaosPath(scenario, protocol)))),
  ).map(String);
}

function read(results: Results, path: string): ProtocolReport {
  return onlyReport(results.read<ProtocolReport[]>(path), path) as ProtocolReport;
}

function rows(results: Results, scenario: string): string[][] {
  const [classic, consumer] = PROTOCOLS.map((protocol) => read(results, chaosPath(scenario, protocol))) as [
    ProtocolReport,
    ProtocolReport,
  ];
  // A run whose stack or fault script failed (`error`) measured nothing: said so, not counted as a result.
  const pair = sideBySide(scenario, [classic, consumer], 'did not run');
  const { window, row } = pair;
  const count = (report: ProtocolReport, key: string) =>
    num(countsOf(report, 'no-lost-or-ghost-orders')[key] ?? 0);
  /**
   * Effects found more often than once (a duplicate applied) and less (an event never applied),
   * from the applied-exactly-once checker's lines: "<effect>: expected E: N (e.g. <id> (found), …)".
   */
  const effects = (report: ProtocolReport, kind: 'more' | 'fewer') => {
    const found = report.invariants.find((invariant) => invariant.name === 'applied-exactly-once') as
      | { passed: boolean; violations?: string[] }
      | undefined;
    let total = 0;
    for (const line of found?.violations ?? []) {
      const match = /expected (\d+): (\d+) \(e\.g\. [^(]*\((\d+)\)/.exec(line);
      if (!match) continue;
      const [, expected, count, sample] = match.map(Number) as [number, number, number, number];
      if (sample > expected === (kind === 'more')) total += count;
    }
    return total === 0 ? '0' : `**${num(total)}**`;
  };
  return [
    window('longest stretch without an event published', (r) => r.progress?.longestWithoutPublishingMs),
    window('longest stretch without an event applied', (r) => r.progress?.longestWithoutApplyingMs),
    // The protocols differ in how long a group stops: the slowest group's longest stretch.
    window('longest stretch one consumer group applied nothing', (r) => {
      const gaps = Object.values(r.progress?.longestWithoutApplyingMsByGroup ?? {}).filter(
        (ms) => ms != null,
      );
      return gaps.length > 0 ? Math.max(...(gaps as number[])) : null;
    }),
    ...(classic.partitionWindows || consumer.partitionWindows ? memberRows(pair) : []),
    window('longest order decision', (r) => r.load.decisionMs?.confirmed.max),
    pair.stall(),
    row(
      'events lost / invented / effects applied twice / effects never applied',
      (r) => `${count(r, 'lost')} / ${count(r, 'ghost')} / ${effects(r, 'more')} / ${effects(r, 'fewer')}`,
    ),
    // The stall target has its own row: this one is the invariants the checker counts.
    row('every invariant', (r) =>
      r.invariants.every((invariant) => invariant.passed) ? 'held' : '**broken**',
    ),
  ];
}

/**
 * The figures per member, for a scenario that measured them: the longest the partitions an
 * instance kept stood still while its twin restarted, and the slowest takeover of a killed
 * member's partitions beside the session timeout.
 */
function memberRows({ window, row }: ReturnType<typeof sideBySide<ProtocolReport>>): string[][] {
  const longest = (
    report: ProtocolReport,
    kind: MemberFigure['kind'],
    ms: (figure: MemberFigure) => number | null | undefined,
  ) => {
    const values = (report.partitionWindows ?? []).filter((figure) => figure.kind === kind).map(ms);
    if (values.length === 0 || values.some((value) => value == null)) return null;
    return Math.max(...(values as number[]));
  };
  return [
    window('longest stretch the partitions an instance kept applied nothing while its twin restarted', (r) =>
      longest(r, 'staying', (figure) => figure.longestWithoutApplyingMs),
    ),
    window('a killed instance’s partitions applied again after (the slowest group)', (r) =>
      longest(r, 'takeover', (figure) => figure.consumedAgainAfterMs),
    ),
    row('the groups’ session timeout', (r) =>
      seconds(longest(r, 'takeover', (figure) => figure.sessionTimeoutMs)),
    ),
  ];
}

/** Where each run comes from: its file, revision, day and the machine's load average around it. */
function runNote(results: Results, path: string): string {
  const report = read(results, path);
  const run = report.run;
  if (!run) return results.link(path);
  const revision = `${run.revision ?? 'unknown'}${run.clean === false ? '+changes' : ''}`;
  const load = `load average ${num(run.loadBefore[0] ?? 0, 1)} before, ${num(run.loadAfter[0] ?? 0, 1)} after`;
  return `${results.link(path)} (\`${revision}\`, ${day(report.startedAt)} ${when(report).slice(11)}, ${load})`;
}

const scenarios = pairedScenarios();
const sources = scenarios.flatMap((scenario) => PROTOCOLS.map((protocol) => chaosPath(scenario, protocol)));

/** The failover windows of the cluster scenarios on the classic and the consumer group protocol. */
export const groupProtocols: FigureTable = {
  sources,
  render(results) {
    if (scenarios.length === 0)
      return 'No cluster scenario run on both group protocols yet (`npm run chaos -- cluster-leader-kill --kafka-client platformatic --group-protocol X`).';
    // Runs made on different machines name each machine.
    const cpu = [...new Set(sources.map((path) => read(results, path).run?.cpuModel ?? 'unknown'))].join(
      ' and ',
    );
    const loads = sources.flatMap((path) => {
      const run = read(results, path).run;
      return run ? [run.loadBefore[0] ?? 0, run.loadAfter[0] ?? 0] : [];
    });
    const loadRange =
      loads.length > 0
        ? `load average ${loadSpread(loads)} at the runs' starts and ends`
        : 'load average not recorded';
    return [
      markdownTable(
        ['every process on @platformatic/kafka', 'classic', 'consumer (KIP-848)', 'consumer ÷ classic'],
        scenarios.flatMap((scenario) => rows(results, scenario)),
      ),
      `One run of each, the two protocols one after the other per scenario, tracing off, on ${cpu} ` +
        `(${loadRange}; a 2-core machine, so a load average far above 2 stretches every window). A run ` +
        'whose processes did not start within their deadline measured nothing and was run again later, ' +
        'so the times below give the order the runs kept. ' +
        `Runs: ${sources.map((path) => runNote(results, path)).join(', ')}.`,
    ].join('\n\n');
  },
};
