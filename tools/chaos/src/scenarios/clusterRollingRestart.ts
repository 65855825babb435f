import type { Scenario } from '../scenario.ts';
import { ownCluster } from './support.ts';

export const clusterRollingRestart: Scenario = {
  name: 'cluster-rolling-restart',
  breaks:
    'on a three-broker cluster, every broker stopped (controlled shutdown) and started again, one after the other',
  expectation:
    'Each stopping broker hands its leaderships to the others first; producers and consumers follow them. ' +
    'The API answers throughout, and every event is applied once, in order per order.',
  needs: { cluster: true },
  load: { rate: 40, durationMs: 40_000 },
  quiescenceTimeoutMs: 120_000,
  inject: async (context) => {
    const cluster = ownCluster(context);
    await context.sleep(4_000);
    for (const node of cluster.nodes) {
      const id = node.cluster?.nodeId;
      context.fault(`stop broker ${id} (controlled shutdown)`);
      await node.stop();
      context.fault(`start broker ${id}`);
      await node.start();
      await cluster.waitUntilReady(180_000);
      context.log(`broker ${id} back`);
      await context.sleep(2_000);
    }
    context.restored('every broker restarted');
  },
};
