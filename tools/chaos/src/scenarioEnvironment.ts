// The first step of a chaos run: what the scenario runs on. A broker, a cluster, a PostgreSQL or a
// Kafka Connect worker of its own when the scenario breaks one of them, then the system under test
// on top; and the last step: all of it removed again, whatever happened in between.
import { type PostgresPair, startPostgresPair } from '@outbox/devstack/postgres-pair';
import type { PrivatePostgres } from '@outbox/devstack/testing/private-postgres';
import { startPrivatePostgres } from '@outbox/devstack/testing/private-postgres';
import { startTestCluster, type TestCluster } from '@outbox/devstack/testing/test-broker';
import type { KafkaClientName, KafkaGroupProtocol } from '@outbox/runtime/kafka';
import {
  COMPOSE_KAFKA_BROKERS,
  type ComposeControl,
  composeStack,
  freshComposeStack,
} from './compose/composeStack.ts';
import { defaultPostgresUrl } from './database.ts';
import { type OwnBroker, startOwnBroker } from './faults/ownBroker.ts';
import { type OwnConnect, startOwnConnect } from './faults/ownConnect.ts';
import type { OpsScraper } from './opsScraper.ts';
import type { Scenario } from './scenario.ts';
import type { ScenarioReport } from './scenarioReport.ts';
import { type ChaosStack, type DatabaseName, databaseUrlsOf, startChaosStack } from './stack.ts';

/** What a run chooses for every scenario it runs. */
export type RunOptions = {
  /** A broker to share, for scenarios that do not break the broker. Without it each scenario starts one. */
  kafkaBrokers?: string[];
  /** KAFKA_CLIENT of every process (kafkajs when left out): to compare the clients under the same faults. */
  kafkaClient?: KafkaClientName;
  /** KAFKA_GROUP_PROTOCOL of every consumer (classic when left out): to compare the protocols under the same faults. */
  groupProtocol?: KafkaGroupProtocol;
  /** Fixes the load's sequence of orders. */
  seed?: number;
  log?: (line: string) => void;
};

/**
 * One run of a scenario: the scenario, how the run was asked for, its log and timeline, and
 * everything it started, set as it starts, so that `dispose` removes exactly that.
 */
export type ScenarioRun = {
  scenario: Scenario;
  options: RunOptions;
  /** When the run started (epoch ms). */
  started: number;
  /** Faults and recoveries, at milliseconds since the load started. */
  timeline: ScenarioReport['timeline'];
  log(line: string): void;
  kafkaBrokers: string[];
  ownBroker?: OwnBroker;
  cluster?: TestCluster;
  postgres?: PrivatePostgres;
  /** Each failed-over database's primary and standby (needs.postgresPair, needs.failoverDatabases). */
  pairs?: Partial<Record<DatabaseName, PostgresPair>>;
  connect?: OwnConnect;
  stack?: ChaosStack;
  /** The compose stack's containers (needs.compose). */
  compose?: ComposeControl;
  scraper?: OpsScraper;
};

/**
 * What the scenario runs on and the system under test on top, noted in the run as each part
 * starts: the compose stack (needs.compose), or the processes of the run's own.
 */
export async function startEnvironment(run: ScenarioRun): Promise<ChaosStack> {
  if (run.scenario.needs?.compose) return startComposeSystem(run);
  await startInfrastructure(run);
  return startSystem(run);
}

/** Broker (or cluster), PostgreSQL and Connect as the scenario needs them; the shared broker otherwise. */
async function startInfrastructure(run: ScenarioRun): Promise<void> {
  const { scenario, log } = run;
  const sharedBrokers = run.options.kafkaBrokers;
  const needs = scenario.needs ?? {};
  if (needs.cluster) {
    log('starting a three-node Kafka cluster of its own');
    run.cluster = await startTestCluster(`chaos-${scenario.name}`);
  } else if (needs.ownBroker || !sharedBrokers) {
    log('starting a broker of its own');
    run.ownBroker = await startOwnBroker(
      scenario.name,
      needs.brokerLatencyMs === undefined ? {} : { latencyMs: needs.brokerLatencyMs },
    );
  }
  run.kafkaBrokers = run.cluster?.cluster.brokers ?? run.ownBroker?.broker.brokers ?? sharedBrokers ?? [];
  if (needs.privatePostgres) {
    log('starting a private PostgreSQL');
    run.postgres = await startPrivatePostgres({ logicalDecoding: needs.cdc === true });
  }
  if (needs.postgresPair) {
    const replication = needs.postgresPair;
    const databases = needs.failoverDatabases ?? ['orders'];
    log(`starting a PostgreSQL primary and standby (${replication}) for ${databases.join(', ')}`);
    run.pairs = {};
    for (const database of databases) {
      run.pairs[database] = await startPostgresPair({ label: `${scenario.name}-${database}`, replication });
    }
  }
  if (needs.cdc) {
    log(
      `starting a Kafka Connect worker of its own${needs.exactlyOnceSource ? ' (exactly-once source)' : ''}`,
    );
    run.connect = await startOwnConnect(scenario.name, run.kafkaBrokers, {
      exactlyOnce: needs.exactlyOnceSource === true,
    });
  }
}

/**
 * The compose stack instead (needs.compose): a fresh one (with the `cdc` profile: every relay in
 * debezium mode), healthy.
 */
async function startComposeSystem(run: ScenarioRun): Promise<ChaosStack> {
  const cdc = run.scenario.needs?.compose?.profile === 'cdc';
  run.log(`./dev compose down, then up${cdc ? ' (profile cdc, RELAY_MODE=debezium)' : ''}`);
  freshComposeStack(cdc ? { COMPOSE_PROFILES: 'cdc', RELAY_MODE: 'debezium' } : { RELAY_MODE: 'polling' });
  const { stack, control } = await composeStack();
  run.kafkaBrokers = COMPOSE_KAFKA_BROKERS;
  run.stack = stack;
  run.compose = control;
  return stack;
}

/** The four apps and their relays (or connectors) on the infrastructure started above. */
async function startSystem(run: ScenarioRun): Promise<ChaosStack> {
  const { scenario, cluster, connect, postgres, pairs } = run;
  const { kafkaClient, groupProtocol } = run.options;
  const stack = await startChaosStack({
    label: scenario.name,
    kafkaBrokers: run.kafkaBrokers,
    postgresUrl: postgres?.url ?? defaultPostgresUrl,
    ...(pairs
      ? {
          databaseServers: Object.fromEntries(
            Object.entries(pairs).map(([database, pair]) => [database, pair.url]),
          ),
        }
      : {}),
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
      orders: { ...scenario.stack?.env?.orders, WRITE_MODE: scenario.writeMode ?? 'outbox' },
    },
    // Every process the stack starts, restarts included: the services, their extra instances, the relays.
    ...(kafkaClient ? { kafkaClient } : {}),
    ...(groupProtocol ? { groupProtocol } : {}),
  });
  run.stack = stack;
  if (connect && !scenario.needs?.cdcRegisteredByTheScenario) {
    // Before the load, as a deployment does; the relays drain rows written before a slot exists.
    await connect.register(databaseUrlsOf(stack), stack.topicPrefix);
    run.log(`connectors running, slots active (${Object.values(connect.slots).join(', ')})`);
  }
  return stack;
}

/** Removes what the run started, newest first. */
export async function dispose(run: ScenarioRun): Promise<void> {
  await run.scraper?.stop();
  // Connectors and slots before the databases: a database with a replication slot cannot be dropped.
  await run.connect?.dispose();
  await run.stack?.stop();
  await run.ownBroker?.dispose();
  await run.cluster?.dispose();
  await run.postgres?.remove();
  for (const pair of Object.values(run.pairs ?? {})) await pair.remove();
}
