import { DUAL_WRITE_COUNTS, type ScenarioReport } from '@outbox/chaos';
import { markdownTable, markdownTableOf } from '@outbox/devstack/table';
import { resultsFile } from '../../bench/support/results.ts';
import { num, times } from './format.ts';
import { type FigureTable, ofFile } from './types.ts';

type Load = ScenarioReport['load'];
type Percentiles = Pick<Load['decisionMs']['confirmed'], 'p50' | 'p99'>;
type Gaps = NonNullable<ScenarioReport['progress']>;
/**
 * What the chaos runner writes for a scenario (@outbox/chaos ScenarioReport), as the figures read it:
 * what earlier runs did not record yet is optional, and a gap they could not measure is null.
 */
export type ChaosReport = Pick<
  ScenarioReport,
  'scenario' | 'writeMode' | 'passed' | 'startedAt' | 'error'
> & {
  durationMs?: ScenarioReport['durationMs'];
  progress?: { [Gap in keyof Gaps]?: Gaps[Gap] | null };
  load: Pick<Load, 'rate' | 'durationMs' | 'sent' | 'accepted' | 'retries' | 'rejected'> &
    Partial<Pick<Load, 'shed' | 'shedAnswers' | 'answerMs' | 'decisionMs'>>;
  quiescence: Pick<ScenarioReport['quiescence'], 'afterLoadMs'>;
  machine?: ScenarioReport['machine'];
  run?: Pick<NonNullable<ScenarioReport['run']>, 'revision' | 'clean' | 'tracing'>;
  invariants: Pick<ScenarioReport['invariants'][number], 'name' | 'passed' | 'counts'>[];
};

export function onlyReport(reports: ChaosReport[], path: string): ChaosReport {
  const [report] = reports;
  if (!report) throw new Error(`${path} holds no scenario`);
  return report;
}

const perSecond = (count: number, durationMs: number) => `${num(count / (durationMs / 1000), 1)}/s`;
export const when = (report: ChaosReport | undefined) =>
  report ? `${report.startedAt.slice(0, 16).replace('T', ' ')} UTC` : '?';
export const verdict = (report: ChaosReport) => (report.passed ? 'pass' : '**FAIL**');
/** What the checker counted for one invariant of a run (none when it did not run). */
export const countsOf = (report: ChaosReport, invariant: string): Record<string, number> =>
  report.invariants.find((found) => found.name === invariant)?.counts ?? {};
/**
 * What the runs ran on, as their reports record it: the revision, the host and its 1-minute load
 * average at the end of each run, and tracing (earlier reports recorded none of it).
 */
export function runOf(reports: ChaosReport[]): string {
  const machines = reports.flatMap((report) => (report.machine ? [report.machine] : []));
  const [first] = machines;
  if (!first) return 'the report records no revision, host or load average';
  const loads = machines.map((machine) => num(machine.loadAverage[0] ?? 0, 1));
  const { run } = reports[0] ?? {};
  const revision = run ? `revision \`${run.revision}\`${run.clean ? '' : ' with uncommitted changes'}, ` : '';
  return (
    `${revision}${first.cpu} × ${first.cores}, load average ${loads.join(', ')} at the end of ` +
    `${machines.length === 1 ? 'the run' : 'each run'}${run ? `, tracing ${run.tracing}` : ''}`
  );
}
/** The first line of the error a scenario threw, without its "Error: ". */
const errorLine = (report: ChaosReport) => report.error?.split('\n')[0]?.replace(/^Error: /, '');
const percentiles = (figures: Percentiles | undefined) =>
  figures ? `${num(figures.p50)} / ${num(figures.p99)} ms` : '—';

const OVERLOAD = resultsFile('chaos.overload.json');

export const overload = ofFile<ChaosReport[]>(OVERLOAD, (reports, link) => {
  const report = onlyReport(reports, OVERLOAD);
  const { load } = report;
  const seconds = num(load.durationMs / 1000);
  const held = report.invariants.filter((invariant) => invariant.passed).length;
  const timeouts = load.rejected['network error'] ?? 0;
  return [
    markdownTable(
      ['the load generator', `over ${seconds} s`, 'per second'],
      [
        ['rate asked', '', `${num(load.rate)}/s`],
        [
          'orders started (at most 512 in flight; a shed order keeps its slot while it waits to retry)',
          num(load.sent),
          perSecond(load.sent, load.durationMs),
        ],
        [
          'requests sent, retries included',
          num(load.sent + load.retries),
          perSecond(load.sent + load.retries, load.durationMs),
        ],
        ['orders accepted (201)', num(load.accepted), perSecond(load.accepted, load.durationMs)],
        [
          'answers shed (503 overloaded)',
          num(load.shedAnswers ?? 0),
          perSecond(load.shedAnswers ?? 0, load.durationMs),
        ],
        ['orders still shed at their last attempt', num(load.shed ?? 0), ''],
        ['orders ended on a client timeout', num(timeouts), ''],
      ],
    ),
    markdownTable(
      ['on the client’s clock', 'p50 / p99'],
      [
        ['answer of an accepted order', percentiles(load.answerMs?.accepted)],
        ['answer of a shed request', percentiles(load.answerMs?.shed)],
        ['created → confirmed', percentiles(load.decisionMs?.confirmed)],
        ['created → cancelled', percentiles(load.decisionMs?.cancelled)],
      ],
    ),
    `Invariants held: ${held} of ${report.invariants.length}; quiet ${num(report.quiescence.afterLoadMs / 1000, 1)} s after the load. ` +
      `${link(OVERLOAD)}, run ${when(report)} (${runOf([report])}).`,
  ].join('\n\n');
});

const DUAL_WRITES = resultsFile('chaos.dual-writes.json');
const WRITE_MODE: Record<string, string> = {
  'commit-then-publish': 'naive: commit, then send (`commit-then-publish`)',
  'publish-then-commit': 'naive: send, then commit (`publish-then-commit`)',
  outbox: 'transactional outbox',
};

export const dualWrites = ofFile<ChaosReport[]>(DUAL_WRITES, (reports, link) => {
  const count = (report: ChaosReport, key: string) => countsOf(report, 'no-lost-or-ghost-orders')[key] ?? 0;
  const bold = (value: number) => (value > 0 ? `**${num(value)}**` : '0');
  return [
    markdownTable(
      [
        'how orders writes `ORDER_CREATED`',
        'orders committed',
        'events lost',
        'events invented',
        'every invariant',
      ],
      reports.map((report) =>
        report.error
          ? [
              WRITE_MODE[report.writeMode] ?? report.writeMode,
              '—',
              '—',
              '—',
              `not run to the end: ${errorLine(report)}`,
            ]
          : [
              WRITE_MODE[report.writeMode] ?? report.writeMode,
              num(count(report, 'committed')),
              bold(count(report, 'lost')),
              bold(count(report, 'ghost')),
              report.passed ? 'held' : 'broken',
            ],
      ),
    ),
    `Counted by the chaos suite's checker from the databases and the topics: ${link(DUAL_WRITES)}, run ${when(reports[0])}; ` +
      `the chaos report beside it gives each scenario's load and faults (${runOf(reports)}).`,
  ].join('\n\n');
});

/** Every count the checker's no-lost-or-ghost-orders invariant keeps, per write mode, with the load it ran under. */
export const dualWritesCounts = ofFile<ChaosReport[]>(DUAL_WRITES, (reports, link) => {
  const counted = Object.entries(DUAL_WRITE_COUNTS).map(([key, heading]) => [
    heading,
    (report: ChaosReport) =>
      report.error ? '—' : num(countsOf(report, 'no-lost-or-ghost-orders')[key] ?? 0),
  ]);
  return [
    markdownTableOf(reports, {
      'write mode': (report) => `\`${report.writeMode}\``,
      verdict: (report) => (report.error ? 'not run to the end' : verdict(report)),
      'orders accepted / sent': (report) =>
        report.error ? '—' : `${num(report.load.accepted)} / ${num(report.load.sent)}`,
      ...Object.fromEntries(counted),
    }),
    `${link(DUAL_WRITES)}, run ${when(reports[0])}, ${runOf(reports)}` +
      (reports.some((report) => report.error)
        ? `; ${reports
            .filter((report) => report.error)
            .map((report) => `\`${report.writeMode}\`: ${errorLine(report)}`)
            .join('; ')}`
        : '') +
      '.',
  ].join('\n\n');
});

export const TOPICS = ['order.events', 'reservation.events', 'payment.events'];
const CONSUMERS = ['inventory', 'billing', 'orders'];
export const seconds = (ms: number | null | undefined) => (ms == null ? '–' : `${num(ms / 1000, 1)} s`);

type Stalled = ChaosReport & Pick<ScenarioReport, 'stall'>;

/**
 * Rows that set two runs of one scenario side by side: a cell each, and for a window the second's ÷
 * the first's. With `unrun`, a run that threw (`error`) measured nothing and says so in its cells.
 */
export function sideBySide<R extends Stalled>(scenario: string, [first, second]: [R, R], unrun?: string) {
  const name = `\`${scenario}\``;
  const skipped = (report: R) => unrun !== undefined && Boolean(report.error);
  const both = (cell: (report: R) => string) =>
    [first, second].map((report) => (skipped(report) ? (unrun as string) : cell(report)));
  const row = (label: string, cell: (report: R) => string) => [`${name}: ${label}`, ...both(cell), ''];
  return {
    name,
    both,
    row,
    window(label: string, ms: (report: R) => number | null | undefined): string[] {
      const [a, b] = [ms(first), ms(second)];
      const ratio = a && b != null && !skipped(first) && !skipped(second) ? times(b / a) : '';
      return [`${name}: ${label}`, ...both((report) => seconds(ms(report))), ratio];
    },
    stall: () =>
      row('within the stall target', (r) =>
        r.stall ? `${r.stall.withinTarget ? 'yes' : '**no**'} (${seconds(r.stall.targetMs)})` : '–',
      ),
  };
}

/** What the checker counted of a run's duplicates: on the topics, and by each consumer's own counter. */
export function duplicateCounts(report: ChaosReport) {
  const counts = countsOf(report, 'duplicates-reconcile');
  const onTopics = (what: string) =>
    TOPICS.reduce((sum, topic) => sum + (counts[`${topic} ${what}`] ?? 0), 0);
  return {
    messages: num(onTopics('messages')),
    duplicates: num(onTopics('duplicates')),
    byConsumer: CONSUMERS.map((name) =>
      num(counts[`${name} consumer: own duplicate counter since its last start`] ?? 0),
    ).join(' / '),
  };
}

/** A run of every scenario records each one's duration and, where a fault was restored, its time to recover. */
type AllReport = ChaosReport &
  Pick<ScenarioReport, 'durationMs'> & {
    quiescence: Partial<Pick<ScenarioReport['quiescence'], 'recoveryMs'>>;
  };
type Column = [header: string, cell: (report: AllReport) => string];

/** The columns of a run of several scenarios: the run of every scenario and the cluster's pick theirs. */
const COLUMNS = {
  scenario: ['scenario', (report) => `\`${report.scenario}\``],
  verdict: ['verdict', verdict],
  orders: ['orders accepted / sent', (report) => `${report.load.accepted} / ${report.load.sent}`],
  retries: ['client retries', (report) => num(report.load.retries)],
  messages: ['messages on topics', (report) => duplicateCounts(report).messages],
  duplicates: ['duplicates on topics', (report) => duplicateCounts(report).duplicates],
  byConsumer: [
    "consumers' own duplicate counters (inventory / billing / orders)",
    (report) => duplicateCounts(report).byConsumer,
  ],
  stalls: [
    'nothing published / applied for at most',
    (report) =>
      `${seconds(report.progress?.longestWithoutPublishingMs)} / ${seconds(report.progress?.longestWithoutApplyingMs)}`,
  ],
  quiet: ['quiet after load', (report) => seconds(report.quiescence.afterLoadMs)],
  recovery: ['recovery', (report) => seconds(report.quiescence.recoveryMs)],
  whole: ['whole run', (report) => seconds(report.durationMs)],
} satisfies Record<string, Column>;

/** One row per scenario of the run in `path`, in the columns named, from the checker's counts. */
function scenariosTable(path: string, columns: (keyof typeof COLUMNS)[]): FigureTable {
  return ofFile<AllReport[]>(path, (reports, link) => {
    const picked: Column[] = columns.map((name) => COLUMNS[name]);
    return [
      markdownTable(
        picked.map(([header]) => header),
        reports.map((report) => picked.map(([, cell]) => cell(report))),
      ),
      `${link(path)}, started ${when(reports[0])}.`,
    ].join('\n\n');
  });
}

/** The summary of a chaos run: one row per scenario. */
export const chaosAll = scenariosTable(resultsFile('chaos.all.json'), [
  'scenario',
  'verdict',
  'orders',
  'retries',
  'messages',
  'duplicates',
  'byConsumer',
  'quiet',
  'recovery',
  'whole',
]);

/** `npm run chaos -- cluster`: every scenario of the three-broker cluster, with the windows without progress. */
export const chaosCluster = scenariosTable(resultsFile('chaos.cluster.json'), [
  'scenario',
  'verdict',
  'orders',
  'messages',
  'duplicates',
  'byConsumer',
  'stalls',
  'quiet',
  'whole',
]);

const FAILOVERS = [
  resultsFile('chaos.postgres-failover-async.json'),
  resultsFile('chaos.postgres-failover-sync.json'),
  resultsFile('chaos.postgres-failover-async-unguarded.json'),
  resultsFile('chaos.postgres-failover-all-async.json'),
  resultsFile('chaos.postgres-failover-all-sync.json'),
] as const;

/** The database failover scenarios, from the checker's `failover-announces-no-lost-order` counts. */
export const chaosFailover: FigureTable = {
  sources: FAILOVERS,
  render({ read, link }) {
    const reports = FAILOVERS.map((path) => onlyReport(read<ChaosReport[]>(path), path));
    const failover = (report: ChaosReport, key: string) =>
      countsOf(report, 'failover-announces-no-lost-order')[key] ?? 0;
    return [
      markdownTableOf(reports, {
        scenario: (report) => `\`${report.scenario}\``,
        verdict,
        'acknowledged orders lost': (report) =>
          `${num(failover(report, 'ordersLost'))} of ${num(report.load.accepted)}`,
        'ghost events': (report) => num(failover(report, 'ghostEvents')),
        'effects of orders that do not exist': (report) =>
          num(failover(report, 'effectsOfOrdersThatDoNotExist')),
        'orders PENDING for good': (report) =>
          num(countsOf(report, 'no-lost-or-ghost-orders').stuckPending ?? 0),
        'window without writes': (report) => seconds(failover(report, 'windowWithoutWritesMs')),
      }),
      reports.map((report, i) => `${link(FAILOVERS[i] as string)}, run ${when(report)}.`).join(' '),
    ].join('\n\n');
  },
};
