import type { Scenario } from '../scenario.ts';
import { busiestCoordinator, ownCluster } from './support.ts';

export const clusterCoordinatorKill: Scenario = {
  name: 'cluster-coordinator-kill',
  breaks:
    'on a three-broker cluster, kill -9 of the broker coordinating the most consumer groups (the leader of their ' +
    '__consumer_offsets partitions) mid-stream, started again 12 s later',
  expectation:
    'Another broker takes the groups over within seconds; every member finds the new coordinator, rejoins and ' +
    'carries on from its committed offsets (offsets it could not commit are applied again and skipped). No group ' +
    'stops applying for more than 10 s; every event is applied once, in order per order.',
  needs: { cluster: true },
  load: { rate: 40, durationMs: 40_000 },
  maxStallMs: 10_000,
  inject: async (context) => {
    const cluster = ownCluster(context);
    await context.sleep(8_000);
    const { nodeId, groups } = await busiestCoordinator(context);
    context.fault(`kill -9 broker ${nodeId}, coordinator of ${groups.join(', ')}`);
    await cluster.node(nodeId).kill();
    await context.sleep(12_000);
    context.fault(`start broker ${nodeId} again (same data dir)`);
    await cluster.node(nodeId).start();
    await cluster.waitUntilReady(180_000);
    context.restored(`broker ${nodeId} back in the cluster`);
  },
};
