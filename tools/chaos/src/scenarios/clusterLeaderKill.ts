import type { Scenario } from '../scenario.ts';
import { busiestLeader, ownCluster } from './support.ts';

export const clusterLeaderKill: Scenario = {
  name: 'cluster-leader-kill',
  breaks:
    'on a three-broker cluster, kill -9 of the broker leading the most partitions of the event topics mid-stream, ' +
    'started again 10 s later',
  expectation:
    'The other two elect new leaders within seconds; the relays resend what was not acknowledged (an ack means two ' +
    'replicas have it, so nothing acknowledged is lost); consumers follow the new leaders. Every event is applied once, ' +
    'in order per order; the killed broker rejoins and catches up.',
  needs: { cluster: true },
  load: { rate: 40, durationMs: 25_000 },
  inject: async (context) => {
    const cluster = ownCluster(context);
    await context.sleep(6_000);
    const { nodeId, leads, of } = await busiestLeader(context);
    context.fault(`kill -9 broker ${nodeId}, leader of ${leads} of the ${of} event partitions`);
    await cluster.node(nodeId).kill();
    await context.sleep(10_000);
    context.fault(`start broker ${nodeId} again (same data dir)`);
    await cluster.node(nodeId).start();
    await cluster.waitUntilReady(180_000);
    context.restored(`broker ${nodeId} back in the cluster`);
  },
};
