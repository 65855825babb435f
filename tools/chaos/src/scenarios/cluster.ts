// On a three-broker cluster of the scenario's own, with two relays per outbox and two instances of
// every service: brokers killed, frozen and restarted under load, and processes failing over.
import type { Scenario, ScenarioContext } from '../scenario.ts';
import { busiestCoordinator, busiestLeader, killAndRestart, waitUntilMidBatch } from './support.ts';

/** kill -9 of one broker, and the same broker started again `downMs` later on its data dir. */
async function killBroker(context: ScenarioContext, nodeId: number, why: string, downMs: number) {
  const cluster = context.cluster;
  context.fault(`kill -9 broker ${nodeId}, ${why}`);
  await cluster.node(nodeId).kill();
  await context.sleep(downMs);
  context.fault(`start broker ${nodeId} again (same data dir)`);
  await cluster.node(nodeId).start();
  await cluster.waitUntilReady(180_000);
  context.restored(`broker ${nodeId} back in the cluster`);
}

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
    await context.sleep(6_000);
    const { nodeId, leads, of } = await busiestLeader(context);
    await killBroker(context, nodeId, `leader of ${leads} of the ${of} event partitions`, 10_000);
  },
};

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
    await context.sleep(8_000);
    const { nodeId, groups } = await busiestCoordinator(context);
    await killBroker(context, nodeId, `coordinator of ${groups.join(', ')}`, 12_000);
  },
};

/** kafkajs's default session timeout, which the services keep: a member silent this long is dropped. */
const SESSION_TIMEOUT_MS = 30_000;

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
    const cluster = context.cluster;
    await context.sleep(8_000);
    const { nodeId, groups } = await busiestCoordinator(context);
    const pid = cluster.node(nodeId).pid;
    if (pid === undefined) throw new Error(`broker ${nodeId} is not running`);
    context.fault(`SIGSTOP broker ${nodeId} (pid ${pid}), coordinator of ${groups.join(', ')}`);
    process.kill(pid, 'SIGSTOP');
    try {
      await context.sleep(SESSION_TIMEOUT_MS + 5_000);
    } finally {
      // Never leave a frozen JVM behind, whatever happened meanwhile.
      process.kill(pid, 'SIGCONT');
    }
    context.fault(`SIGCONT broker ${nodeId}`);
    await cluster.waitUntilReady(180_000);
    context.restored(`broker ${nodeId} thawed and back in the cluster`);
  },
};

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
    const cluster = context.cluster;
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
    const cluster = context.cluster;
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

export const clusterConsumerFailover: Scenario = {
  name: 'cluster-consumer-failover',
  breaks:
    'on a three-broker cluster with two instances of every service, kill -9 of the second instance of inventory, ' +
    'billing and orders in the middle of their chunks; started again 10 s later',
  expectation:
    'Each group moves the dead instance’s partitions to the live one, which reads from the last committed offset: ' +
    'the chunks that died are read again, and the inbox skips what committed. Every event is applied once.',
  needs: { cluster: true },
  load: { rate: 40, durationMs: 25_000 },
  inject: async (context) => {
    await context.sleep(6_000);
    await Promise.all(
      (['inventory-2', 'billing-2', 'orders-2'] as const).map((name) =>
        killAndRestart(context, name, 10_000, ': its partitions move to the other instance'),
      ),
    );
  },
};

export const clusterRelayFailover: Scenario = {
  name: 'cluster-relay-failover',
  breaks:
    'on a three-broker cluster with two relays per outbox, kill -9 of one relay of each outbox mid-batch, ' +
    'started again 10 s later',
  expectation:
    'The other relay keeps draining; the dead relay’s claimed rows come back when their lease ends and are ' +
    'published then (at most that batch twice). Nothing is lost, and every event is applied once.',
  needs: { cluster: true },
  load: { rate: 40, durationMs: 25_000 },
  inject: async (context) => {
    await context.sleep(6_000);
    await Promise.all(
      (['orders', 'inventory', 'billing'] as const).map(async (database) => {
        const relay = `relay-${database}` as const;
        await waitUntilMidBatch(context.stack.databases[database].url, relay);
        await killAndRestart(context, relay, 10_000, ' mid-batch; its twin carries on');
      }),
    );
  },
};
