import type { Scenario } from '../scenario.ts';
import type { ProcessName } from '../stack.ts';
import { killAndRestart, waitUntilMidBatch } from './support.ts';

const ORDER_RELAYS: ProcessName[] = ['relay-orders', 'relay-orders-2', 'relay-orders-3'];

export const competingRelays: Scenario = {
  name: 'competing-relays',
  breaks:
    'three relays on the orders outbox and two on each of the others; one orders relay after another killed with kill -9 every 2.5 s',
  expectation:
    'Relays never publish one row at the same time (SKIP LOCKED claims, leases); per aggregate the events ' +
    "stay in seq order; a killed relay's batch is taken over after its lease, as duplicates at most.",
  stack: { extraRelays: { orders: 2, inventory: 1, billing: 1 } },
  inject: async (context) => {
    await context.sleep(2_000);
    for (let round = 0; round < 5; round++) {
      const relay = ORDER_RELAYS[round % ORDER_RELAYS.length] ?? 'relay-orders';
      const midBatch = await waitUntilMidBatch(context.stack.databases.orders.url, relay, 3_000);
      await killAndRestart(context, relay, 1_000, midBatch ? ' (mid-batch)' : ' (between batches)');
      await context.sleep(1_500);
    }
  },
};
