import { admission } from './admission.ts';
import {
  batchedCostPerEvent,
  batchesAtCapacity,
  costAtCapacity,
  costWithWaits,
  statementsAtCapacity,
} from './atCapacity.ts';
import { brokerRequestsAtLowRate } from './brokerRequests.ts';
import { consumerWait, costByRateAndWait, costOfASecond, waitLength } from './cadence.ts';
import { cdcSideBySide, pollingOrCdc } from './cdc.ts';
import { cdcClusterLeaderThenConnect } from './cdcCluster.ts';
import { chaosAll, chaosCluster, chaosFailover, dualWrites, dualWritesCounts, overload } from './chaos.ts';
import { cdcDuplicates, chaosCdc } from './chaosCdc.ts';
import { chaosCompose } from './chaosCompose.ts';
import { claimOnGrownOutbox, semiSpace } from './claimAndMemory.ts';
import { brokerFailover } from './clusterFailover.ts';
import { composeFirstBuild } from './composeFirstBuild.ts';
import { coordinatorFrozen, coordinatorKill } from './coordinator.ts';
import { outboxMigrations, retention, writePath } from './database.ts';
import { groupCommit, oneStatementPerBatch, outsideTheStackRun5, overloadGrouped } from './groupCommit.ts';
import { groupProtocols } from './groupProtocols.ts';
import { idleDemo } from './idle.ts';
import { kafkaClients } from './kafkaClients.ts';
import { ordersAtLoad, ordersProfileParts } from './ordersAtLoad.ts';
import {
  batchingAtLowRate,
  leversAtLowRate,
  overloadGoodput,
  refusalCost,
  refusalCostIntel,
  replyLocks,
  tracingCost,
  writeLinger,
} from './performance.ts';
import { PROSE_FIGURES } from './prose.ts';
import { relayVsDebezium } from './relayVsDebezium.ts';
import { scalingCosts, scalingMatrix } from './scaling.ts';
import { SCALING_ARITHMETIC } from './scalingArithmetic.ts';
import { maxWalSize, systemCapacity, systemPollingVsCdc } from './system.ts';
import { bfada78Vs400e20f, performanceTargetsProcesses, TARGETS_FIGURES } from './targets.ts';
import { testSuite } from './testSuite.ts';
import { consumerThroughput, inventoryLockWait, relayThroughput } from './throughput.ts';
import type { FigureTable } from './types.ts';
import { zipkinSpanWeight } from './zipkin.ts';

/** Every table of figures the docs may hold, by the id its markers name. */
export const FIGURES: Record<string, FigureTable> = {
  'system-capacity': systemCapacity,
  'max-wal-size': maxWalSize,
  'system-polling-vs-cdc': systemPollingVsCdc,
  ...TARGETS_FIGURES,
  'performance-targets-processes': performanceTargetsProcesses,
  'group-commit': groupCommit,
  'one-statement-per-batch': oneStatementPerBatch,
  'bfada78-vs-400e20f': bfada78Vs400e20f,
  'relay-throughput': relayThroughput,
  'refusal-cost': refusalCost,
  'refusal-cost-intel': refusalCostIntel,
  'cost-of-a-second': costOfASecond,
  'cost-by-rate-and-wait': costByRateAndWait,
  'consumer-wait': consumerWait,
  'wait-length': waitLength,
  'consumer-throughput': consumerThroughput,
  'cdc-side-by-side': cdcSideBySide,
  'polling-or-cdc': pollingOrCdc,
  'relay-vs-debezium': relayVsDebezium,
  overload,
  'chaos-all': chaosAll,
  'chaos-cluster': chaosCluster,
  'chaos-failover': chaosFailover,
  'chaos-cdc': chaosCdc,
  'chaos-compose': chaosCompose,
  'compose-first-build': composeFirstBuild,
  'cdc-duplicates': cdcDuplicates,
  'cdc-cluster-leader-then-connect': cdcClusterLeaderThenConnect,
  'broker-failover': brokerFailover,
  'coordinator-kill': coordinatorKill,
  'coordinator-frozen': coordinatorFrozen,
  'dual-writes': dualWrites,
  'dual-writes-counts': dualWritesCounts,
  'write-path': writePath,
  retention,
  'outbox-migrations': outboxMigrations,
  scaling: scalingMatrix,
  'scaling-costs': scalingCosts,
  'tracing-cost': tracingCost,
  'overload-goodput': overloadGoodput,
  admission,
  'levers-at-low-rate': leversAtLowRate,
  'batching-at-low-rate': batchingAtLowRate,
  'write-linger': writeLinger,
  'broker-requests-at-low-rate': brokerRequestsAtLowRate,
  'reply-locks': replyLocks,
  'cost-at-capacity': costAtCapacity,
  'orders-at-load': ordersAtLoad,
  'orders-profile-parts': ordersProfileParts,
  'claim-on-a-grown-outbox': claimOnGrownOutbox,
  'semi-space': semiSpace,
  'idle-demo': idleDemo,
  'kafka-clients': kafkaClients,
  'group-protocols': groupProtocols,
  'zipkin-span-weight': zipkinSpanWeight,
  'test-suite': testSuite,
  // The figures inside sentences (<!-- figure:id -->).
  ...PROSE_FIGURES,
  ...SCALING_ARITHMETIC,
  'inventory-lock-wait': inventoryLockWait,
  'statements-at-capacity': statementsAtCapacity,
  'batched-cost-per-event': batchedCostPerEvent,
  'batches-at-capacity': batchesAtCapacity,
  'cost-with-waits': costWithWaits,
  'outside-the-stack-run-5': outsideTheStackRun5,
  'overload-grouped': overloadGrouped,
};
