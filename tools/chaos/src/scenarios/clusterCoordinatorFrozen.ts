import type { Scenario } from '../scenario.ts';
import { busiestCoordinator, ownCluster } from './support.ts';

/** kafkajs's default session timeout, which the services keep: a member silent this long is dropped. */
const SESSION_TIMEOUT_MS = 30_000;
const FROZEN_MS = SESSION_TIMEOUT_MS + 5_000;

export const clusterCoordinatorFrozen: Scenario = {
  name: 'cluster-coordinator-frozen',
  breaks:
    'on a three-broker cluster, the broker coordinating the most consumer groups frozen (SIGSTOP) for 35 s, ' +
    'longer than the groups’ 30 s session timeout, then thawed (SIGCONT): a half-dead broker that still holds ' +
    'its connections open and answers nothing',
  expectation:
    'The other two fence it within seconds and take its leaderships and its groups over; clients waiting on it ' +
    'give up after their request timeout, find the new leaders and coordinator and carry on. No group stops ' +
    'applying for longer than the session timeout plus 10 s; every event is applied once, in order per order.',
  needs: { cluster: true },
  load: { rate: 40, durationMs: 60_000 },
  maxStallMs: SESSION_TIMEOUT_MS + 10_000,
  quiescenceTimeoutMs: 120_000,
  inject: async (context) => {
    const cluster = ownCluster(context);
    await context.sleep(8_000);
    const { nodeId, groups } = await busiestCoordinator(context);
    const pid = cluster.node(nodeId).pid;
    if (pid === undefined) throw new Error(`broker ${nodeId} is not running`);
    context.fault(`SIGSTOP broker ${nodeId} (pid ${pid}), coordinator of ${groups.join(', ')}`);
    process.kill(pid, 'SIGSTOP');
    try {
      await context.sleep(FROZEN_MS);
    } finally {
      // Never leave a frozen JVM behind, whatever happened meanwhile.
      process.kill(pid, 'SIGCONT');
    }
    context.fault(`SIGCONT broker ${nodeId}`);
    await cluster.waitUntilReady(180_000);
    context.restored(`broker ${nodeId} thawed and back in the cluster`);
  },
};
