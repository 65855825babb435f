// What one chaos run reports: the load it drove, the faults and recoveries, whether the system
// went quiet, and each invariant's verdict. Written to JSON and Markdown by report.ts.

import type { WriteMode } from '@outbox/contracts';
import type { RunRecord } from '@outbox/devstack/run-record';
import type { LatencySummary, LoadResult } from '@outbox/loadgen';
import type { KafkaClientName, KafkaGroupProtocol } from '@outbox/runtime/kafka';
import type { InvariantResult } from './invariants/index.ts';
import type { OpsScrapeResult } from './opsScraper.ts';
import type { PartitionFigure } from './partitionWindows.ts';
import type { ProgressGaps } from './progressWatch.ts';
import type { Scenario } from './scenario.ts';

export type ScenarioReport = {
  scenario: string;
  breaks: string;
  expectation: string;
  /** Orders' WRITE_MODE during the run (the dual-write scenarios run the naive ones). */
  writeMode: WriteMode;
  /** What published the outboxes: the polling relays, or Debezium connectors (with `needs.cdc`). */
  relayMode: RelayModeOfRun;
  /** KAFKA_CLIENT of every process of the run (services and relays); kafkajs when not set. */
  kafkaClient?: KafkaClientName;
  /** KAFKA_GROUP_PROTOCOL of every consumer of the run (orders, inventory, billing); classic when not set. */
  groupProtocol?: KafkaGroupProtocol;
  /**
   * In reports written before the flag reached every process: the client of the relays only, the
   * services' consumers on kafkajs. Kept so that those results files still read as what they were.
   */
  relayKafkaClient?: KafkaClientName;
  passed: boolean;
  /** The commit the run exercised (`+changes` when the work tree differed from it), read at its start. */
  revision?: string;
  /** Revision, clean tree, start and end, CPU model, load before and after, tracing (runRecord.ts). */
  run?: RunRecord;
  /**
   * The machine, at the end of the run: figures of one host do not compare with another's.
   * Load average over 1, 5 and 15 minutes, as os.loadavg() gives it.
   */
  machine?: { cpu: string; cores: number; loadAverage: number[] };
  /** The system under test: processes of the run's own, or the compose stack (needs.compose). */
  target?: 'processes' | 'compose';
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
    /** What was outstanding about every 5 s of the wait (quiescence.ts): falling, or standing still. */
    trail?: { afterMs: number; outstanding: string[] }[];
    /** When the wait gave up: how long nothing had moved by then. */
    stillForMs?: number;
  };
  invariants: InvariantResult[];
  /** While the load ran: the longest stretch without an event published, and without one applied. */
  progress?: ProgressGaps;
  /** The scenario's maxStallMs and whether every window above stayed within it. */
  stall?: { targetMs: number; withinTarget: boolean };
  /**
   * Per member of a group, where the scenario asked for it: how long the partitions a member kept
   * through another's restart stood still, and how long a killed member's partitions waited for
   * the others (partitionWindows.ts).
   */
  partitionWindows?: PartitionFigure[];
  /** Every process's /metrics and /healthz, scraped about once a second throughout (opsScraper.ts). */
  opsEndpoints: OpsScrapeResult;
  /** Set when the scenario itself failed (a fault script threw, the stack did not start). */
  error?: string;
};

type RelayModeOfRun = 'polling' | 'debezium' | 'debezium exactly-once';

export function relayModeOf(scenario: Scenario): RelayModeOfRun {
  if (scenario.needs?.compose) return scenario.needs.compose.profile === 'cdc' ? 'debezium' : 'polling';
  if (!scenario.needs?.cdc) return 'polling';
  return scenario.needs.exactlyOnceSource ? 'debezium exactly-once' : 'debezium';
}
