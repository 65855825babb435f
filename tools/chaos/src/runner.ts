import { setTimeout as sleep } from 'node:timers/promises';
import type { WriteMode } from '@outbox/contracts';
import { type PostgresPair, startPostgresPair } from '@outbox/devstack/postgres-pair';
import { type PrivatePostgres, startPrivatePostgres } from '@outbox/devstack/testing/private-postgres';
import { startTestCluster, type TestCluster } from '@outbox/devstack/testing/test-cluster';
import {
  collectOutcome,
  type LatencySummary,
  type LoadResult,
  runLoad,
  scrapeDuplicates,
} from '@outbox/loadgen';
import { defaultPostgresUrl } from './database.ts';
import { type OwnBroker, startOwnBroker } from './faults/ownBroker.ts';
import { type OwnConnect, startOwnConnect } from './faults/ownConnect.ts';
import {
  checkInvariants,
  type ExpectedDeadLetters,
  type InvariantResult,
  readStock,
  takeSnapshot,
} from './invariants/index.ts';
import { type OpsScrapeResult, type OpsScraper, startOpsScraper } from './opsScraper.ts';
import { type ProgressGaps, startProgressWatch } from './progressWatch.ts';
import { type Quiescence, waitForQuiescence } from './quiescence.ts';
import type { Scenario, ScenarioContext } from './scenario.ts';
import { type ChaosStack, DATABASES, type DatabaseName, startChaosStack } from './stack.ts';

export type ScenarioReport = {
  scenario: string;
  breaks: string;
  expectation: string;
  /** Orders' WRITE_MODE during the run (the dual-write scenarios run the naive ones). */
  writeMode: WriteMode;
  /** What published the outboxes: the polling relays, or Debezium connectors (with `needs.cdc`). */
  relayMode: RelayModeOfRun;
  passed: boolean;
  startedAt: string;
  durationMs: number;
  load: {
    rate: number;
    durationMs: number;
    seed: number;
    sent: number;
    accepted: number;
    /** Orders the API shed (503 overloaded at their last attempt): refused before any work, not failed. */
    shed: number;
    /** Attempts answered 503 overloaded, the ones of orders accepted on a later attempt included. */
    shedAnswers: number;
    /** Orders not accepted of which an attempt got no answer: they may exist (loadgen's unknownOutcome). */
    unknownOutcome: number;
    /** How long the last attempt took to be answered, client side (loadgen's LoadResult.answerMs). */
    answerMs: LoadResult['answerMs'];
    /** Accepted order created → decided, both timestamps from the orders database (loadgen's collectOutcome). */
    decisionMs: { confirmed: LatencySummary; cancelled: LatencySummary };
    rejected: Record<string, number>;
    /** Attempts beyond the first (the client retries 503s and network errors with the same key). */
    retries: number;
  };
  /** Faults and recoveries, at milliseconds since the load started. */
  timeline: { atMs: number; what: string }[];
  quiescence: {
    reached: boolean;
    /** From the end of the load and the fault script until the system was quiet. */
    afterLoadMs: number;
    /** From the last `restored` step until the system was quiet: the time to recover. */
    recoveryMs: number | undefined;
    outstanding: string[];
  };
  invariants: InvariantResult[];
  /** While the load ran: the longest stretch without an event published, and without one applied. */
  progress?: ProgressGaps;
  /** Every process's /metrics and /healthz, scraped about once a second throughout (opsScraper.ts). */
  opsEndpoints: OpsScrapeResult;
  /** Set when the scenario itself failed (a fault script threw, the stack did not start). */
  error?: string;
};

export type RunOptions = {
  /** A broker to share, for scenarios that do not break the broker. Without it each scenario starts one. */
  kafkaBrokers?: string[];
  /** Fixes the load's sequence of orders. */
  seed?: number;
  log?: (line: string) => void;
};

export type RelayModeOfRun = 'polling' | 'debezium' | 'debezium exactly-once';

function relayModeOf(scenario: Scenario): RelayModeOfRun {
  if (!scenario.needs?.cdc) return 'polling';
  return scenario.needs.exactlyOnceSource ? 'debezium exactly-once' : 'debezium';
}

const DEFAULT_LOAD = { rate: 75, durationMs: 15_000 };
const NO_LATENCIES = { p50: 0, p95: 0, p99: 0, max: 0, count: 0 };

/**
 * Run one scenario from start to verdict: start the system (on a broker and PostgreSQL of its
 * own when the scenario breaks them), drive load while the fault script runs, wait until the
 * system is quiet, then check every invariant against the databases and topics.
 */
export async function runScenario(scenario: Scenario, options: RunOptions = {}): Promise<ScenarioReport> {
  const started = Date.now();
  const log = (line: string) => options.log?.(`[${scenario.name}] ${line}`);
  const needs = scenario.needs ?? {};
  const load = { ...DEFAULT_LOAD, ...scenario.load };
  const writeMode = scenario.writeMode ?? 'outbox';
  let ownBroker: OwnBroker | undefined;
  let cluster: TestCluster | undefined;
  let postgres: PrivatePostgres | undefined;
  let pair: PostgresPair | undefined;
  let connect: OwnConnect | undefined;
  let stack: ChaosStack | undefined;
  let scraper: OpsScraper | undefined;
  const timeline: ScenarioReport['timeline'] = [];
  try {
    if (needs.cluster) {
      log('starting a three-node Kafka cluster of its own');
      cluster = await startTestCluster(`chaos-${scenario.name}`);
    } else if (needs.ownBroker || !options.kafkaBrokers) {
      log('starting a broker of its own');
      ownBroker = await startOwnBroker(
        scenario.name,
        needs.brokerLatencyMs === undefined ? {} : { latencyMs: needs.brokerLatencyMs },
      );
    }
    const kafkaBrokers = cluster?.cluster.brokers ?? ownBroker?.broker.brokers ?? options.kafkaBrokers ?? [];
    if (needs.privatePostgres) {
      log('starting a private PostgreSQL');
      postgres = await startPrivatePostgres({ logicalDecoding: needs.cdc === true });
    }
    if (needs.postgresPair) {
      log(`starting a PostgreSQL primary and standby (${needs.postgresPair}) for the orders database`);
      pair = await startPostgresPair({ label: scenario.name, replication: needs.postgresPair });
    }
    if (needs.cdc) {
      log(
        `starting a Kafka Connect worker of its own${needs.exactlyOnceSource ? ' (exactly-once source)' : ''}`,
      );
      connect = await startOwnConnect(scenario.name, kafkaBrokers, {
        exactlyOnce: needs.exactlyOnceSource === true,
      });
    }
    stack = await startChaosStack({
      label: scenario.name,
      kafkaBrokers,
      postgresUrl: postgres?.url ?? defaultPostgresUrl,
      ...(pair ? { databaseServers: { orders: pair.url } } : {}),
      // On a cluster, as in production: replicated topics, and two of every process that scales out.
      ...(cluster
        ? {
            kafkaReplicationFactor: 3,
            extraRelays: { orders: 1, inventory: 1, billing: 1 },
            extraInstances: { orders: 1, inventory: 1, billing: 1 },
          }
        : {}),
      ...(connect ? { connectUrl: connect.worker.url, replicationSlots: connect.slots } : {}),
      ...scenario.stack,
      env: {
        ...scenario.stack?.env,
        orders: { ...scenario.stack?.env?.orders, WRITE_MODE: writeMode },
      },
    });
    if (connect) {
      // Before the load: a row committed before its connector's slot exists is never published.
      await connect.register(
        {
          orders: stack.databases.orders.url,
          inventory: stack.databases.inventory.url,
          billing: stack.databases.billing.url,
        },
        stack.topicPrefix,
      );
      log(`connectors running, slots active (${Object.values(connect.slots).join(', ')})`);
    }
    scraper = startOpsScraper(stack);
    const initialStock = await readStock(stack.databases.inventory.url);
    log(`stack up (topics ${stack.topicPrefix}*); load ${load.rate}/s for ${load.durationMs / 1000} s`);

    // Load and fault script side by side.
    const loadStarted = Date.now();
    const progressWatch = startProgressWatch(stack, connect ? { cdcBrokers: kafkaBrokers } : {});
    let restoredAt: number | undefined;
    const expected: ExpectedDeadLetters = { outboxFailed: [], consumerDeadLetters: [] };
    const loadRun: Promise<LoadResult> = runLoad({
      ordersUrl: stack.process('orders').url,
      rate: load.rate,
      durationMs: load.durationMs,
      ...(load.mix ? { mix: load.mix } : {}),
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      ...(load.concurrency === undefined ? {} : { concurrency: load.concurrency }),
      // An outage of the orders database lasts seconds: keep retrying (same Idempotency-Key).
      retry: load.retry ?? { attempts: 10, maxDelayMs: 2_000 },
    });
    const context: ScenarioContext = {
      stack,
      broker: ownBroker?.broker,
      cluster: cluster?.cluster,
      brokerProxy: ownBroker?.proxy,
      postgres,
      pair,
      connect,
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
      log,
    };
    // Both settle before anything is torn down: a fault script that throws must not leave the
    // load generator sending to a stack that is being stopped.
    // Progress is watched while the load runs: after it, nothing new comes to publish or apply.
    const progressWatched = loadRun.then(
      () => progressWatch.stop(),
      () => progressWatch.stop(),
    );
    const [loadOutcome, faultOutcome] = await Promise.allSettled([loadRun, scenario.inject(context)]);
    const progress = await progressWatched;
    if (faultOutcome.status === 'rejected') throw faultOutcome.reason;
    if (loadOutcome.status === 'rejected') throw loadOutcome.reason;
    const loadResult = loadOutcome.value;
    const loadEnded = Date.now(); // the load and the fault script
    log(
      `load done: ${loadResult.accepted} accepted, ${loadResult.shed} shed of ${loadResult.orders.length}; waiting until quiet`,
    );

    const quiet: Quiescence = await waitForQuiescence(
      stack,
      kafkaBrokers,
      scenario.quiescenceTimeoutMs ?? 90_000,
      // A naive write leaves orders PENDING that no event will ever move: not work left to wait for.
      { pendingOrdersAreWork: writeMode === 'outbox', relayMode: connect ? 'debezium' : 'polling' },
    );
    log(
      quiet.reached ? `quiet after ${quiet.at - loadEnded} ms` : `not quiet: ${quiet.outstanding.join('; ')}`,
    );

    const acknowledged = loadResult.orders.flatMap((order) => (order.orderId ? [order.orderId] : []));
    const snapshot = await takeSnapshot({
      writeMode,
      relayMode: connect ? 'debezium' : 'polling',
      databaseUrls: {
        orders: stack.databases.orders.url,
        inventory: stack.databases.inventory.url,
        billing: stack.databases.billing.url,
      },
      kafkaBrokers,
      topicPrefix: stack.topicPrefix,
      groups: stack.groups,
      acknowledged,
      initialStock,
      expected,
      serviceDuplicateCounters: await duplicateCounters(stack),
      ...(needs.postgresPair ? { failover: { replication: needs.postgresPair } } : {}),
    });
    const invariants = checkInvariants(snapshot);
    // The system is quiet: one look at the orders database is the outcome (no waiting).
    const outcome = await collectOutcome({
      databaseUrls: {
        orders: stack.databases.orders.url,
        inventory: stack.databases.inventory.url,
        billing: stack.databases.billing.url,
      },
      orderIds: acknowledged,
      timeoutMs: 0,
    });
    const opsEndpoints = await scraper.stop();
    return {
      scenario: scenario.name,
      breaks: scenario.breaks,
      expectation: scenario.expectation,
      writeMode,
      relayMode: relayModeOf(scenario),
      passed:
        quiet.reached && invariants.every((result) => result.passed) && opsEndpoints.failures.length === 0,
      startedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
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
        decisionMs: { confirmed: outcome.latencyMs, cancelled: outcome.cancelLatencyMs },
        rejected: loadResult.rejected,
        retries: loadResult.orders.reduce((sum, order) => sum + order.attempts - 1, 0),
      },
      timeline,
      progress,
      quiescence: {
        reached: quiet.reached,
        afterLoadMs: quiet.at - loadEnded,
        recoveryMs: restoredAt === undefined ? undefined : quiet.at - restoredAt,
        outstanding: quiet.outstanding,
      },
      invariants,
      opsEndpoints,
    };
  } catch (err) {
    const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    log(`failed: ${error}`);
    return failedReport(scenario, started, timeline, error);
  } finally {
    const cleanup = Date.now();
    await scraper?.stop();
    // Connectors and slots before the databases: a database with a replication slot cannot be dropped.
    await connect?.dispose();
    await stack?.stop();
    await ownBroker?.dispose();
    await cluster?.dispose();
    await postgres?.remove();
    await pair?.remove();
    log(`cleaned up in ${Date.now() - cleanup} ms`);
  }
}

/** The consumers' own duplicate counters (since each process's last start), keyed by service. */
async function duplicateCounters(stack: ChaosStack): Promise<Partial<Record<DatabaseName, number>>> {
  const urls = Object.fromEntries(DATABASES.map((name) => [name, stack.process(name).url]));
  const { byConsumer } = await scrapeDuplicates(urls);
  const counters: Partial<Record<DatabaseName, number>> = {};
  for (const name of DATABASES) counters[name] = byConsumer[stack.groups[name]] ?? 0;
  return counters;
}

function failedReport(
  scenario: Scenario,
  started: number,
  timeline: ScenarioReport['timeline'],
  error: string,
): ScenarioReport {
  return {
    scenario: scenario.name,
    breaks: scenario.breaks,
    expectation: scenario.expectation,
    writeMode: scenario.writeMode ?? 'outbox',
    relayMode: relayModeOf(scenario),
    passed: false,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
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
