import type { Scenario } from '../scenario.ts';
import { killAndRestart } from './support.ts';

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
