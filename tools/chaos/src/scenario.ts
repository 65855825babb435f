import type { WriteMode } from '@outbox/contracts';
import type { KafkaBroker } from '@outbox/devstack/kafka-broker';
import type { KafkaCluster } from '@outbox/devstack/kafka-cluster';
import type { PostgresPair, Replication } from '@outbox/devstack/postgres-pair';
import type { PrivatePostgres } from '@outbox/devstack/testing/private-postgres';
import type { OrderMix, RetryPolicy } from '@outbox/loadgen';
import type { ComposeControl } from './compose/composeStack.ts';
import type { OwnConnect } from './faults/ownConnect.ts';
import type { GroupObserver } from './groupMembers.ts';
import type { ExpectedDeadLetters } from './invariants/index.ts';
import type { PartitionWindow } from './partitionWindows.ts';
import type { ChaosStack, DatabaseName, StackOptions } from './stack.ts';
import type { TcpProxy } from './tcpProxy.ts';

/**
 * What a scenario's fault script can reach while the load runs. What the scenario did not declare
 * in `needs` throws when asked for, naming the declaration.
 */
export type ScenarioContext = {
  stack: ChaosStack;
  /** The scenario's own broker (`needs.ownBroker`). */
  broker: KafkaBroker;
  /** The scenario's own three-node cluster (`needs.cluster`). */
  cluster: KafkaCluster;
  /** The latency proxy in front of the own broker (`needs.brokerLatencyMs`). */
  brokerProxy: TcpProxy;
  /** The private PostgreSQL server (`needs.privatePostgres`). */
  postgres: PrivatePostgres;
  /** A failed-over database's primary and standby (`needs.postgresPair`, `needs.failoverDatabases`). */
  pair(database: DatabaseName): PostgresPair;
  /** The Kafka Connect worker and its connectors that publish the outboxes (`needs.cdc`). */
  connect: OwnConnect;
  /** The compose stack's containers (`needs.compose`). */
  compose: ComposeControl;
  /** Milliseconds since the load started. */
  elapsed(): number;
  sleep(ms: number): Promise<void>;
  /** Record a fault (or a step of one) in the report's timeline. */
  fault(what: string): void;
  /**
   * The system is whole again (broker back, process restarted...): recovery is measured from the
   * last call to this until the system is quiet.
   */
  restored(what: string): void;
  /** Poison the scenario planted on purpose: the checker expects exactly these dead letters. */
  expectDeadLetters(expected: Partial<ExpectedDeadLetters>): void;
  /** The consumer groups as their coordinator sees them: members and what each holds (groupMembers.ts). */
  groups(): GroupObserver;
  /** Partitions and a stretch for the checker to measure once the system is quiet (partitionWindows.ts). */
  measurePartitions(window: PartitionWindow): void;
  log(message: string): void;
};

export type Scenario = {
  /** Command-line name, e.g. `broker-kill-9`. */
  name: string;
  /** One line: what breaks. */
  breaks: string;
  /** What the system is expected to do about it (shown in the report and docs). */
  expectation: string;
  needs?: {
    /** The scenario breaks the broker, so it gets one of its own. */
    ownBroker?: boolean;
    /** Clients reach the own broker through a loopback proxy adding this one-way latency. */
    brokerLatencyMs?: number;
    /** The scenario restarts PostgreSQL, so it gets a private server. */
    privatePostgres?: boolean;
    /**
     * The scenario fails the orders database over: it lives on a primary and a streaming standby
     * of the scenario's own (postgresPair.ts), replicating this way, reached through one endpoint
     * that the promotion moves. The other databases stay on the shared server, unless
     * `failoverDatabases` names them too.
     */
    postgresPair?: Replication;
    /** Which databases live on a pair of their own (default the orders database only). */
    failoverDatabases?: DatabaseName[];
    /**
     * The scenario fails brokers over: it runs on a three-node cluster of its own (topics at
     * replication factor 3, min.insync.replicas 2), with two relays per outbox and two instances of
     * each consumer service.
     */
    cluster?: boolean;
    /**
     * Every outbox is published by CDC instead of the polling relays: a Kafka Connect worker of the
     * scenario's own (on the scenario's broker) with a Debezium connector per outbox, the relays in
     * debezium mode (they claim nothing). Connectors, replication slots and publications are
     * removed at the end. The server must run with wal_level=logical (a private one does).
     */
    cdc?: boolean;
    /** With `cdc`: Kafka Connect's exactly-once source support on the worker, required by each connector. */
    exactlyOnceSource?: boolean;
    /**
     * With `cdc`: the connectors are not registered before the load; the scenario registers them
     * while orders are written (`context.connect.register`), and the relays drain what came before.
     */
    cdcRegisteredByTheScenario?: boolean;
    /**
     * The system under test is the stack of docker-compose.yml (`./dev compose up`), not processes
     * of the run's own; with profile `cdc`, Debezium publishes every outbox (compose/composeStack.ts).
     */
    compose?: { profile?: 'cdc' };
  };
  stack?: Pick<StackOptions, 'env' | 'extraRelays' | 'extraInstances' | 'kafkaReplicationFactor'>;
  /** Orders' WRITE_MODE; the outbox when not given. */
  writeMode?: WriteMode;
  /**
   * Default: 75 orders/s for 15 s (5× the rate of the first chaos runs) with the load generator's
   * default mix, 16 requests in flight at most, and 503s and network errors retried up to 10
   * attempts (an outage of the orders database lasts seconds).
   */
  load?: {
    rate?: number;
    durationMs?: number;
    mix?: OrderMix;
    concurrency?: number;
    retry?: Partial<RetryPolicy>;
  };
  /**
   * The longest stretch, while the load ran, in which nothing may be published and no consumer
   * group may apply anything: past it the scenario fails, every invariant held or not. None when
   * left out (the window is still reported).
   */
  maxStallMs?: number;
  /**
   * How long the system may take to go quiet after the load and the faults ended. Default 90 s.
   * Past it the wait goes on while work still moves, and gives up once it stands still
   * (quiescence.ts's keepWaiting).
   */
  quiescenceTimeoutMs?: number;
  /** The fault script; runs alongside the load and must leave the system whole when it returns. */
  inject(context: ScenarioContext): Promise<void>;
};
