import type { Scenario } from '../scenario.ts';
import { killAndRestart, waitUntilMidBatch } from './support.ts';

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
