// The middle of a chaos run: the load generator and the scenario's fault script side by side,
// with the timeline of faults and recoveries and the progress watch while the load runs.
import { setTimeout as sleep } from 'node:timers/promises';
import { type LoadResult, runLoad } from '@outbox/loadgen';
import { type GroupObserver, observeGroups } from './groupMembers.ts';
import type { ExpectedDeadLetters } from './invariants/index.ts';
import type { PartitionWindow } from './partitionWindows.ts';
import { type ProgressGaps, startProgressWatch } from './progressWatch.ts';
import type { Scenario, ScenarioContext } from './scenario.ts';
import type { ScenarioRun } from './scenarioEnvironment.ts';
import type { ChaosStack } from './stack.ts';

/** The scenario's load: 75 orders/s for 15 s unless it says otherwise (Scenario.load). */
export const loadOf = (scenario: Scenario) => ({ rate: 75, durationMs: 15_000, ...scenario.load });

export type LoadAndFaults = {
  loadResult: LoadResult;
  progress: ProgressGaps;
  /** When the last `restored` step was recorded (epoch ms), if any. */
  restoredAt: number | undefined;
  expected: ExpectedDeadLetters;
  /** What the fault script asked the checker to measure per member (partitionWindows.ts). */
  partitionWindows: PartitionWindow[];
  /** When both the load and the fault script were done (epoch ms). */
  loadEnded: number;
};

export async function runLoadAndFaults(run: ScenarioRun, stack: ChaosStack): Promise<LoadAndFaults> {
  const { seed } = run.options;
  const load = loadOf(run.scenario);
  const loadStarted = Date.now();
  const progressWatch = startProgressWatch(stack, run.connect ? { cdcBrokers: run.kafkaBrokers } : {});
  const loadRun: Promise<LoadResult> = runLoad({
    ordersUrl: stack.process('orders').url,
    rate: load.rate,
    durationMs: load.durationMs,
    ...(load.mix ? { mix: load.mix } : {}),
    ...(seed === undefined ? {} : { seed }),
    ...(load.concurrency === undefined ? {} : { concurrency: load.concurrency }),
    // An outage of the orders database lasts seconds: keep retrying (same Idempotency-Key).
    retry: load.retry ?? { attempts: 10, maxDelayMs: 2_000 },
  });
  const script = faultScriptContext(run, stack, loadStarted);
  // Both settle before anything is torn down: a fault script that throws must not leave the
  // load generator sending to a stack that is being stopped.
  // Progress is watched while the load runs: after it, nothing new comes to publish or apply.
  const progressWatched = loadRun.then(
    () => progressWatch.stop(),
    () => progressWatch.stop(),
  );
  const [loadOutcome, faultOutcome] = await Promise.allSettled([
    loadRun,
    run.scenario.inject(script.context),
  ]);
  const progress = await progressWatched;
  await script.close();
  if (faultOutcome.status === 'rejected') throw faultOutcome.reason;
  if (loadOutcome.status === 'rejected') throw loadOutcome.reason;
  return {
    loadResult: loadOutcome.value,
    progress,
    restoredAt: script.restoredAt(),
    expected: script.expected,
    partitionWindows: script.partitionWindows,
    loadEnded: Date.now(),
  };
}

/** What the fault script reaches, recording its faults and recoveries in the timeline. */
function faultScriptContext(run: ScenarioRun, stack: ChaosStack, loadStarted: number) {
  const { timeline, log } = run;
  let restoredAt: number | undefined;
  const expected: ExpectedDeadLetters = { outboxFailed: [], consumerDeadLetters: [] };
  const partitionWindows: PartitionWindow[] = [];
  let observer: GroupObserver | undefined;
  const declared = <T>(what: T | undefined, needs: string): T => {
    if (what === undefined) throw new Error(`this scenario must declare ${needs}`);
    return what;
  };
  const context: ScenarioContext = {
    stack,
    get broker() {
      return declared(run.ownBroker?.broker, 'needs.ownBroker');
    },
    get cluster() {
      return declared(run.cluster?.cluster, 'needs.cluster');
    },
    get brokerProxy() {
      return declared(run.ownBroker?.proxy, 'needs.brokerLatencyMs');
    },
    get postgres() {
      return declared(run.postgres, 'needs.privatePostgres');
    },
    pair: (database) => declared(run.pairs?.[database], `needs.postgresPair for ${database}`),
    get connect() {
      return declared(run.connect, 'needs.cdc');
    },
    get compose() {
      return declared(run.compose, 'needs.compose');
    },
    elapsed: () => Date.now() - loadStarted,
    sleep: (ms) => sleep(ms),
    fault: (what) => {
      timeline.push({ atMs: Date.now() - loadStarted, what });
      log(`fault: ${what}`);
    },
    restored: (what) => {
      restoredAt = Date.now();
      timeline.push({ atMs: restoredAt - loadStarted, what: `restored: ${what}` });
      log(`restored: ${what}`);
    },
    expectDeadLetters: (more) => {
      expected.outboxFailed.push(...(more.outboxFailed ?? []));
      expected.consumerDeadLetters.push(...(more.consumerDeadLetters ?? []));
    },
    groups: () => {
      observer ??= observeGroups(run.kafkaBrokers);
      return observer;
    },
    measurePartitions: (window) => partitionWindows.push(window),
    log,
  };
  return {
    context,
    expected,
    partitionWindows,
    restoredAt: () => restoredAt,
    close: async () => observer?.close().catch(() => undefined),
  };
}
