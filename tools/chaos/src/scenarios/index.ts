import type { Scenario } from '../scenario.ts';
import { brokenDedup } from './brokenDedup.ts';
import { brokerKill9 } from './brokerKill9.ts';
import { brokerStoppedLong } from './brokerStoppedLong.ts';
import { cdcBrokerKill9 } from './cdcBrokerKill9.ts';
import {
  cdcClusterLeaderThenConnectKill,
  cdcClusterLeaderThenConnectKillRf2,
  cdcClusterLeaderThenConnectKillRf2ExactlyOnce,
} from './cdcClusterLeaderThenConnectKill.ts';
import { cdcConnectKill9, cdcConnectKill9ExactlyOnce } from './cdcConnectKill9.ts';
import { cdcConnectorRegisteredUnderLoad } from './cdcConnectorRegisteredUnderLoad.ts';
import { cdcConnectorTaskFailed } from './cdcConnectorTaskFailed.ts';
import { cdcPostgresRestart } from './cdcPostgresRestart.ts';
import { clusterConsumerFailover } from './clusterConsumerFailover.ts';
import { clusterCoordinatorFrozen } from './clusterCoordinatorFrozen.ts';
import { clusterCoordinatorKill } from './clusterCoordinatorKill.ts';
import { clusterLeaderKill } from './clusterLeaderKill.ts';
import { clusterMinIsrUnmet } from './clusterMinIsrUnmet.ts';
import { clusterRelayFailover } from './clusterRelayFailover.ts';
import { clusterRollingRestart } from './clusterRollingRestart.ts';
import { clusterServiceRollingRestart } from './clusterServiceRollingRestart.ts';
import { competingRelays } from './competingRelays.ts';
import { COMPOSE_SCENARIOS } from './compose.ts';
import { consumerKillAfterCommit } from './consumerKillAfterCommit.ts';
import { consumerKillMidChunk } from './consumerKillMidChunk.ts';
import { consumerRestartLoop } from './consumerRestartLoop.ts';
import { DUAL_WRITES } from './dualWrites.ts';
import { overload } from './overload.ts';
import { poisonAfterDecode } from './poisonAfterDecode.ts';
import { poisonEvents } from './poisonEvents.ts';
import { poisonMidChunk } from './poisonMidChunk.ts';
import {
  postgresFailoverAllAsync,
  postgresFailoverAllSync,
  postgresFailoverAsync,
  postgresFailoverAsyncUnguarded,
  postgresFailoverSync,
} from './postgresFailover.ts';
import { postgresRestart } from './postgresRestart.ts';
import { relayConnectionDropped } from './relayConnectionDropped.ts';
import { relayCrashAfterPublish } from './relayCrashAfterPublish.ts';
import { relayKill9 } from './relayKill9.ts';
import { relayKill9Pipelined } from './relayKill9Pipelined.ts';
import { slowBroker } from './slowBroker.ts';
import { slowPaymentProvider } from './slowPaymentProvider.ts';

/** Every scenario `npm run chaos -- all` runs, in that order. */
export const SCENARIOS: Scenario[] = [
  brokerKill9,
  brokerStoppedLong,
  slowBroker,
  relayKill9,
  relayCrashAfterPublish,
  relayKill9Pipelined,
  competingRelays,
  relayConnectionDropped,
  consumerKillAfterCommit,
  consumerKillMidChunk,
  consumerRestartLoop,
  postgresRestart,
  poisonEvents,
  poisonAfterDecode,
  poisonMidChunk,
  slowPaymentProvider,
  overload,
];

/**
 * On a three-broker cluster with two instances of every process (`npm run chaos -- cluster`):
 * failover under load. Two of them run in CI (tests/chaos); all of them on demand.
 */
export const CLUSTER_SCENARIOS: Scenario[] = [
  clusterLeaderKill,
  clusterCoordinatorKill,
  clusterCoordinatorFrozen,
  clusterMinIsrUnmet,
  clusterRollingRestart,
  clusterConsumerFailover,
  clusterRelayFailover,
  clusterServiceRollingRestart,
];

/**
 * The same proof with CDC publishing every outbox (`npm run chaos -- cdc`): a Kafka Connect worker
 * of the scenario's own with a Debezium connector per outbox, the relays in debezium mode. Two of
 * them run in CI (tests/chaos/chaos.cdc-*); all of them on demand.
 */
export const CDC_SCENARIOS: Scenario[] = [
  cdcConnectKill9,
  cdcConnectKill9ExactlyOnce,
  cdcBrokerKill9,
  cdcPostgresRestart,
  cdcConnectorTaskFailed,
  cdcConnectorRegisteredUnderLoad,
  cdcClusterLeaderThenConnectKill,
  cdcClusterLeaderThenConnectKillRf2,
  cdcClusterLeaderThenConnectKillRf2ExactlyOnce,
];

/**
 * The orders database failed over to its standby under load (`npm run chaos -- failover`), with
 * asynchronous and with synchronous replication. One of them runs in CI (tests/chaos); both on demand.
 */
export const FAILOVER_SCENARIOS: Scenario[] = [
  postgresFailoverAsync,
  postgresFailoverSync,
  postgresFailoverAllAsync,
  postgresFailoverAllSync,
];

/** Run only by name: broken builds that prove the checker can fail (each run must FAIL). */
const PROOFS: Scenario[] = [brokenDedup, postgresFailoverAsyncUnguarded];

export { COMPOSE_SCENARIOS, DUAL_WRITES };

/** Every scenario, each group's in turn: what a run names one by. */
export const ALL_SCENARIOS: Scenario[] = [
  ...SCENARIOS,
  ...CLUSTER_SCENARIOS,
  ...CDC_SCENARIOS,
  ...FAILOVER_SCENARIOS,
  ...PROOFS,
  ...DUAL_WRITES,
  ...COMPOSE_SCENARIOS,
];

export function findScenario(name: string): Scenario | undefined {
  return ALL_SCENARIOS.find((scenario) => scenario.name === name);
}
