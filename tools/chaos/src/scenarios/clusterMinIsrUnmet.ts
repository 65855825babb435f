import type { Scenario } from '../scenario.ts';
import { ownCluster } from './support.ts';

export const clusterMinIsrUnmet: Scenario = {
  name: 'cluster-two-brokers-down',
  breaks:
    'on a three-broker cluster, kill -9 of two brokers for 10 s: fewer replicas than min.insync.replicas (2), and ' +
    'the controller quorum lost; then one broker back, then the other',
  expectation:
    'No write is acknowledged with one replica: producers wait and retry, their events stay in the outboxes, and the ' +
    'API keeps answering 201. When a second broker returns, everything drains; nothing is lost or applied twice.',
  needs: { cluster: true },
  load: { rate: 40, durationMs: 30_000 },
  quiescenceTimeoutMs: 150_000,
  inject: async (context) => {
    const cluster = ownCluster(context);
    await context.sleep(5_000);
    const [first, second] = [cluster.node(1), cluster.node(2)];
    context.fault('kill -9 brokers 1 and 2: one replica left, min.insync.replicas is 2');
    await Promise.all([first.kill(), second.kill()]);
    await context.sleep(10_000);
    context.fault('start broker 1 again: two replicas, writes can be acknowledged');
    await first.start();
    await first.waitUntilReady(180_000);
    context.restored('broker 1 back: min.insync.replicas met again');
    await context.sleep(5_000);
    context.fault('start broker 2 again');
    await second.start();
    await cluster.waitUntilReady(180_000);
    context.restored('all three brokers back');
  },
};
