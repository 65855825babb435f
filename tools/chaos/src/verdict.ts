// The last step of a chaos run: wait until the system is quiet, then check every invariant against
// the databases and topics, and write it all into the scenario's report.
import { collectOutcome, scrapeDuplicates } from '@outbox/loadgen';
import { checkInvariants, type InvariantResult, type readStock, takeSnapshot } from './invariants/index.ts';
import { type LoadAndFaults, loadOf } from './loadAndFaults.ts';
import type { OpsScrapeResult } from './opsScraper.ts';
import { measurePartitionWindows, type PartitionFigure } from './partitionWindows.ts';
import type { ProgressGaps } from './progressWatch.ts';
import { type Quiescence, waitForQuiescence } from './quiescence.ts';
import type { Scenario } from './scenario.ts';
import type { ScenarioRun } from './scenarioEnvironment.ts';
import { relayModeOf, type ScenarioReport } from './scenarioReport.ts';
import { type ChaosStack, DATABASES, type DatabaseName, databaseUrlsOf } from './stack.ts';

type Verdict = {
  quiet: Quiescence;
  invariants: InvariantResult[];
  decisionMs: ScenarioReport['load']['decisionMs'];
  opsEndpoints: OpsScrapeResult;
  /** The figures per member the fault script asked for (partitionWindows.ts). */
  partitionWindows: PartitionFigure[];
};

export async function judge(
  { scenario, kafkaBrokers, scraper, log }: ScenarioRun,
  stack: ChaosStack,
  run: LoadAndFaults & { initialStock: Awaited<ReturnType<typeof readStock>> },
): Promise<Verdict> {
  const writeMode = scenario.writeMode ?? 'outbox';
  const relayMode = relayModeOf(scenario) === 'polling' ? 'polling' : 'debezium';
  const quiet = await waitForQuiescence(
    stack,
    kafkaBrokers,
    scenario.quiescenceTimeoutMs ?? 90_000,
    // A naive write leaves orders PENDING that no event will ever move: not work left to wait for.
    { pendingOrdersAreWork: writeMode === 'outbox', relayMode },
  );
  log(
    quiet.reached
      ? `quiet after ${quiet.at - run.loadEnded} ms`
      : `not quiet after ${quiet.at - run.loadEnded} ms, nothing moved for the last ${quiet.stillForMs} ms: ${quiet.outstanding.join('; ')}`,
  );
  const acknowledged = run.loadResult.orders.flatMap((order) => (order.orderId ? [order.orderId] : []));
  const snapshot = await takeSnapshot({
    writeMode,
    relayMode,
    databaseUrls: databaseUrlsOf(stack),
    kafkaBrokers,
    topicPrefix: stack.topicPrefix,
    groups: stack.groups,
    acknowledged,
    initialStock: run.initialStock,
    expected: run.expected,
    serviceDuplicateCounters: await duplicateCounters(stack),
    ...(scenario.needs?.postgresPair ? { failover: { replication: scenario.needs.postgresPair } } : {}),
  });
  // The system is quiet: one look at the orders database is the outcome (no waiting).
  const outcome = await collectOutcome({
    databaseUrls: databaseUrlsOf(stack),
    orderIds: acknowledged,
    timeoutMs: 0,
  });
  return {
    quiet,
    invariants: checkInvariants(snapshot),
    decisionMs: { confirmed: outcome.latencyMs, cancelled: outcome.cancelLatencyMs },
    opsEndpoints: (await scraper?.stop()) ?? { scrapes: 0, failures: [] },
    partitionWindows: measurePartitionWindows(run.partitionWindows, snapshot),
  };
}

/** The consumers' own duplicate counters (since each process's last start), keyed by service. */
async function duplicateCounters(stack: ChaosStack): Promise<Partial<Record<DatabaseName, number>>> {
  const urls = Object.fromEntries(DATABASES.map((name) => [name, stack.process(name).url]));
  const { byConsumer } = await scrapeDuplicates(urls);
  const counters: Partial<Record<DatabaseName, number>> = {};
  for (const name of DATABASES) counters[name] = byConsumer[stack.groups[name]] ?? 0;
  return counters;
}

/** Every window (publishing, applying, each group's applying) against the scenario's target. */
function stallAgainstTarget(
  targetMs: number | undefined,
  progress: ProgressGaps | undefined,
): ScenarioReport['stall'] | undefined {
  if (targetMs === undefined || progress === undefined) return undefined;
  const windows = [
    progress.longestWithoutPublishingMs,
    progress.longestWithoutApplyingMs,
    ...Object.values(progress.longestWithoutApplyingMsByGroup),
  ];
  return { targetMs, withinTarget: windows.every((ms) => ms <= targetMs) };
}

export function finishedReport(
  { scenario, started, timeline }: ScenarioRun,
  run: LoadAndFaults,
  verdict: Verdict,
): ScenarioReport {
  const { loadResult } = run;
  const { quiet, invariants, opsEndpoints } = verdict;
  const load = loadOf(scenario);
  const stall = stallAgainstTarget(scenario.maxStallMs, run.progress);
  return {
    ...reportHeading(scenario, started),
    passed:
      quiet.reached &&
      invariants.every((result) => result.passed) &&
      opsEndpoints.failures.length === 0 &&
      (stall?.withinTarget ?? true),
    load: {
      rate: load.rate,
      durationMs: load.durationMs,
      seed: loadResult.seed,
      sent: loadResult.orders.length,
      accepted: loadResult.accepted,
      shed: loadResult.shed,
      shedAnswers: loadResult.shedAnswers,
      unknownOutcome: loadResult.unknownOutcome,
      answerMs: loadResult.answerMs,
      decisionMs: verdict.decisionMs,
      rejected: loadResult.rejected,
      retries: loadResult.orders.reduce((sum, order) => sum + order.attempts - 1, 0),
    },
    timeline,
    progress: run.progress,
    ...(stall ? { stall } : {}),
    ...(verdict.partitionWindows.length > 0 ? { partitionWindows: verdict.partitionWindows } : {}),
    quiescence: {
      reached: quiet.reached,
      afterLoadMs: quiet.at - run.loadEnded,
      recoveryMs: run.restoredAt === undefined ? undefined : quiet.at - run.restoredAt,
      outstanding: quiet.outstanding,
      trail: quiet.trail,
      ...(quiet.stillForMs === undefined ? {} : { stillForMs: quiet.stillForMs }),
    },
    invariants,
    opsEndpoints,
  };
}

const NO_LATENCIES = { p50: 0, p95: 0, p99: 0, max: 0, count: 0 };

export function failedReport({ scenario, started, timeline }: ScenarioRun, error: string): ScenarioReport {
  return {
    ...reportHeading(scenario, started),
    passed: false,
    load: {
      rate: 0,
      durationMs: 0,
      seed: 0,
      sent: 0,
      accepted: 0,
      shed: 0,
      shedAnswers: 0,
      unknownOutcome: 0,
      answerMs: { accepted: NO_LATENCIES, shed: NO_LATENCIES },
      decisionMs: { confirmed: NO_LATENCIES, cancelled: NO_LATENCIES },
      rejected: {},
      retries: 0,
    },
    timeline,
    quiescence: { reached: false, afterLoadMs: 0, recoveryMs: undefined, outstanding: [] },
    invariants: [],
    opsEndpoints: { scrapes: 0, failures: [] },
    error,
  };
}

function reportHeading(scenario: Scenario, started: number) {
  return {
    scenario: scenario.name,
    breaks: scenario.breaks,
    expectation: scenario.expectation,
    writeMode: scenario.writeMode ?? 'outbox',
    relayMode: relayModeOf(scenario),
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
  };
}
