import type { Scenario } from '../scenario.ts';
import * as broker from './broker.ts';
import * as cdc from './cdc.ts';
import {
  cdcClusterLeaderThenConnectKill,
  cdcClusterLeaderThenConnectKillRf2,
  cdcClusterLeaderThenConnectKillRf2ExactlyOnce,
} from './cdcClusterLeaderThenConnectKill.ts';
import * as cluster from './cluster.ts';
import { clusterServiceRollingRestart } from './clusterServiceRollingRestart.ts';
import { COMPOSE_SCENARIOS } from './compose.ts';
import * as consumers from './consumers.ts';
import { DUAL_WRITES } from './dualWrites.ts';
import { overload } from './overload.ts';
import * as poison from './poison.ts';
import * as postgres from './postgres.ts';
import * as relays from './relays.ts';

/** What `npm run chaos -- <group>` runs, in that order. */
export const GROUPS: Record<string, Scenario[]> = {
  /** The scenarios on a single broker (`npm run chaos -- all`, a name older than the other groups). */
  all: [
    broker.brokerKill9,
    broker.brokerStoppedLong,
    broker.slowBroker,
    relays.relayKill9,
    relays.relayCrashAfterPublish,
    relays.relayKill9Pipelined,
    relays.competingRelays,
    relays.relayConnectionDropped,
    consumers.consumerKillAfterCommit,
    consumers.consumerKillMidChunk,
    consumers.consumerRestartLoop,
    postgres.postgresRestart,
    poison.poisonEvents,
    poison.poisonAfterDecode,
    poison.poisonMidChunk,
    consumers.slowPaymentProvider,
    overload,
  ],
  /**
   * On a three-broker cluster with two instances of every process (`npm run chaos -- cluster`):
   * failover under load. Two of them run in CI (tests/chaos); all of them on demand.
   */
  cluster: [
    cluster.clusterLeaderKill,
    cluster.clusterCoordinatorKill,
    cluster.clusterCoordinatorFrozen,
    cluster.clusterMinIsrUnmet,
    cluster.clusterRollingRestart,
    cluster.clusterConsumerFailover,
    cluster.clusterRelayFailover,
    clusterServiceRollingRestart,
  ],
  /**
   * The same proof with CDC publishing every outbox (`npm run chaos -- cdc`): a Kafka Connect worker
   * of the scenario's own with a Debezium connector per outbox, the relays in debezium mode. Two of
   * them run in CI (tests/chaos/chaos.cdc-*); all of them on demand.
   */
  cdc: [
    cdc.cdcConnectKill9,
    cdc.cdcConnectKill9ExactlyOnce,
    cdc.cdcBrokerKill9,
    cdc.cdcPostgresRestart,
    cdc.cdcConnectorTaskFailed,
    cdc.cdcConnectorRegisteredUnderLoad,
    cdcClusterLeaderThenConnectKill,
    cdcClusterLeaderThenConnectKillRf2,
    cdcClusterLeaderThenConnectKillRf2ExactlyOnce,
  ],
  /**
   * The orders database failed over to its standby under load (`npm run chaos -- failover`), with
   * asynchronous and with synchronous replication. One of them runs in CI (tests/chaos); both on demand.
   */
  failover: [
    postgres.postgresFailoverAsync,
    postgres.postgresFailoverSync,
    postgres.postgresFailoverAllAsync,
    postgres.postgresFailoverAllSync,
  ],
  /** The naive dual writes next to the outbox (the naive ones must FAIL). */
  'dual-writes': DUAL_WRITES,
  compose: COMPOSE_SCENARIOS,
};

/** Run only by name: broken builds that prove the checker can fail (each run must FAIL). */
const PROOFS: Scenario[] = [consumers.brokenDedup, postgres.postgresFailoverAsyncUnguarded];

/** Every scenario, each group's in turn: what a run names one by. */
export const ALL_SCENARIOS: Scenario[] = [...Object.values(GROUPS).flat(), ...PROOFS];

export function findScenario(name: string): Scenario | undefined {
  return ALL_SCENARIOS.find((scenario) => scenario.name === name);
}
