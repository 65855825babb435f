// Figures that sit inside a sentence, marked `<!-- figure:id -->…<!-- /figure -->` in the docs:
// each renders one line from its results files, so a sentence cannot say what its run did not.

import type { RelayVsDebezium } from '../../bench/relay-vs-debezium.ts';
import type { Written } from '../../bench/support/environment.ts';
import { resultsFile } from '../../bench/support/results.ts';
import type { MeasuredReport, SystemResults } from '../../bench/system/records.ts';
import type { WhereTimeGoes } from '../../bench/where-time-goes.ts';
import type { Report as WritePath } from '../../bench/write-path/report.ts';
import type { ChaosReport } from './chaos.ts';
import { day, duration, num, range } from './format.ts';
import { drainCell, RELAY_VS_DEBEZIUM_RUNS } from './relayVsDebezium.ts';
import { variant } from './system.ts';
import { type FigureTable, ofFile } from './types.ts';

type Report = MeasuredReport;

/** The capacity of one stack that scaling.md multiplies: the run its table of costs reads. */
const SYSTEM = resultsFile('system.json');
const scalingToday = ofFile<SystemResults<Report>>(SYSTEM, (results, link) => {
  const { capacity } = variant(results, 'current', SYSTEM);
  return `**${num(capacity)} orders/s** (${link(SYSTEM)}, ${duration(results.args.step)} steps, ${day(results.date)})`;
});

/** One side's drain rate ÷ Debezium's, over both quiet runs and both aggregate counts: "1.05–1.15×". */
function drainRatio(side: string): FigureTable {
  return {
    sources: RELAY_VS_DEBEZIUM_RUNS,
    render({ read }) {
      const ratios = RELAY_VS_DEBEZIUM_RUNS.flatMap((path) => {
        const run = read<RelayVsDebezium>(path);
        return run.parameters.aggregateCounts.map((count) => drainCell(run, count, side).vsDebezium);
      });
      return `${range(ratios, 2)}×`;
    },
  };
}

/** What the tracing-off variant accepted at 1.5× its capacity, in both sampled runs, and its worst p99. */
const SAMPLED = [resultsFile('system.sampled.json'), resultsFile('system.sampled.run-2.json')] as const;
const acceptedAtOneAndAHalf: FigureTable = {
  sources: SAMPLED,
  render({ read }) {
    const steps = SAMPLED.map((path) => {
      const report = variant(read<SystemResults<Report>>(path), 'current', path);
      const step = report.overload?.find((s) => Math.abs(s.offeredRate / report.capacity - 1.5) < 0.05);
      if (!step) throw new Error(`no 1.5× step in ${path}`);
      return step;
    });
    const p99 = Math.max(...steps.map((step) => step.latencyMs.p99));
    return `${range(
      steps.map((step) => step.achievedRate),
      0,
    )}/s accepted at 1.5× with a p99 of at most ${num(p99)} ms`;
  },
};

/**
 * Goodput above capacity in both sampled runs, 1.5× and 2× steps together: accepted ÷ capacity
 * ("1.15–1.43×") and the end-to-end p99 of the accepted ("0.6–0.9 s"), for one variant.
 */
function overloadSteps(read: <T>(path: string) => T, name: string) {
  return SAMPLED.flatMap((path) => {
    const report = variant(read<SystemResults<Report>>(path), name, path);
    return (report.overload ?? []).map((step) => ({
      ratio: step.achievedRate / report.capacity,
      p99: step.latencyMs.p99,
    }));
  });
}
const goodput = (name: string): FigureTable => ({
  sources: SAMPLED,
  render: ({ read }) =>
    `${range(
      overloadSteps(read, name).map((step) => step.ratio),
      2,
    )}×`,
});
const acceptedP99 = (name: string): FigureTable => ({
  sources: SAMPLED,
  render: ({ read }) =>
    `${range(
      overloadSteps(read, name).map((step) => step.p99 / 1000),
      1,
    )} s`,
});

/** What the outbox row adds to production's one-statement write (F1 against F0): latency and throughput. */
const WRITE_PATH = resultsFile('write-path.json');
const outboxRowCost = ofFile<WritePath>(WRITE_PATH, (results, link) => {
  const ratio = (name: string) => results.acrossRuns[name]?.median ?? Number.NaN;
  const percent = (value: number) => `${value >= 1 ? '+' : '−'}${num(Math.abs(value - 1) * 100, 1)}%`;
  const latency = results.runs.at(-1)?.summary.latency;
  const ms = (key: string) => num(latency?.[key]?.medianMs, 2);
  return (
    `${percent(ratio('latencyMedian F1/F0'))} at the median for one caller (${ms('F0')} → ${ms('F1')} ms) and ` +
    `${percent(ratio('throughput c=8 F1/F0'))} transactions per second for eight (${link(WRITE_PATH)}, ${day(results.date)})`
  );
});

/** The load the two guarded failover runs took: what their clients sent, and what the API accepted. */
const GUARDED = [
  resultsFile('chaos.postgres-failover-async.json'),
  resultsFile('chaos.postgres-failover-sync.json'),
];
const guardedFailoverLoad: FigureTable = {
  sources: GUARDED,
  render({ read }) {
    const loads = GUARDED.map((path) => {
      const [report] = read<ChaosReport[]>(path);
      if (!report) throw new Error(`${path} holds no scenario`);
      return report.load;
    });
    const [first] = loads;
    const each = (pick: (load: ChaosReport['load']) => number) =>
      loads.map((load) => num(pick(load))).join(' and ');
    return (
      `it accepted ${each((load) => load.accepted)} of the ${each((load) => load.sent)} orders its clients sent ` +
      `(${num(first?.rate)}/s planned for ${num((first?.durationMs ?? Number.NaN) / 1000)} s)`
    );
  },
};

/**
 * What the polling relays' own statements (claim and mark, the row updates an insert-only outbox
 * would drop) took to execute per order, beside the whole system's CPU per order: the ceiling of
 * that lever, from the runs of today's defaults at 50/s with pg_stat_statements loaded.
 */
const RELAY_STATEMENT_RUNS = [
  resultsFile('where-time-goes.mark-with-next-claim.run-1.json'),
  resultsFile('where-time-goes.mark-with-next-claim.run-2.json'),
] as const;
const relayStatementsShare: FigureTable = {
  sources: RELAY_STATEMENT_RUNS,
  render({ read }) {
    const runs = RELAY_STATEMENT_RUNS.map((path) => {
      const run = read<Written<WhereTimeGoes>>(path);
      const relayMs = run.statements
        .filter((statement) => statement.family.startsWith('relay:'))
        .reduce((sum, statement) => sum + (statement.calls * statement.meanMs) / run.accepted, 0);
      const totalMs = run.cpuMsPerOrder.total ?? Number.NaN;
      return { relayMs, totalMs, share: (100 * relayMs) / totalMs, record: run.run };
    });
    const relay = range(
      runs.map((r) => r.relayMs),
      2,
    );
    const total = range(
      runs.map((r) => r.totalMs),
      1,
    );
    const share = range(
      runs.map((r) => r.share),
      1,
    );
    const revisions = [...new Set(runs.map((r) => `\`${r.record.revision}\``))].join(', ');
    const tracing = [...new Set(runs.map((r) => r.record.tracing))].join(', ');
    return `${relay} ms per order to execute, against ${total} ms of CPU per order for the whole system (${share}%; ${revisions}, tracing ${tracing})`;
  },
};

const RUN_26 = resultsFile('system.targets.run-26.json');
const WAIT_75_ALONE = resultsFile('system.wait-75-alone.json');

/**
 * The POST's answer p99 at the steps of today's code offered at most 80 orders/s: in run 26, whose
 * answers stalled, and in the same code's run alone right after it.
 */
function lowRateAnswers(path: string): FigureTable {
  return ofFile<SystemResults<Report>>(path, (results) => {
    const report = variant(results, 'shipped', path);
    const steps = [report.atFixedRate, ...report.steps, ...(report.underload ?? [])].flatMap((step) =>
      step && step.offeredRate <= 80 ? [step] : [],
    );
    return `${range(steps.map((step) => step.answerP99Ms?.accepted ?? Number.NaN))} ms`;
  });
}

export const PROSE_FIGURES: Record<string, FigureTable> = {
  'answers-run-26': lowRateAnswers(RUN_26),
  'answers-wait-75-alone': lowRateAnswers(WAIT_75_ALONE),
  'relay-statements-share': relayStatementsShare,
  'guarded-failover-load': guardedFailoverLoad,
  'outbox-row-cost': outboxRowCost,
  'goodput-tracing-off': goodput('current'),
  'goodput-shipped': goodput('shipped'),
  'accepted-p99-tracing-off': acceptedP99('current'),
  'accepted-p99-shipped': acceptedP99('shipped'),
  'scaling-today': scalingToday,
  'relay-vs-debezium-one-relay-batch-1000': drainRatio('polling1b1000'),
  'relay-vs-debezium-two-relays-batch-1000': drainRatio('polling2b1000'),
  'relay-vs-debezium-one-relay-batch-100': drainRatio('polling1b100'),
  'relay-vs-debezium-two-relays-batch-100': drainRatio('polling2b100'),
  'accepted-at-one-and-a-half': acceptedAtOneAndAHalf,
};
