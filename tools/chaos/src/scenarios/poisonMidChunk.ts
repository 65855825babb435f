import type { Scenario } from '../scenario.ts';
import { insertPoison } from './poisonAfterDecode.ts';

export const poisonMidChunk: Scenario = {
  name: 'poison-mid-chunk',
  breaks:
    'inventory and billing stopped under load while three decodable but unappliable ORDER_CREATED rows are committed ' +
    'among the orders, then restarted: they catch up on a backlog, so each poison event sits inside a chunk of many',
  expectation:
    'Each poison event is dead-lettered alone with its reason; the rest of its chunk is applied, once, in order; ' +
    'no partition stays stuck.',
  inject: async (context) => {
    await context.sleep(3_000);
    await Promise.all(
      ['inventory', 'billing'].map((name) => context.stack.process(name as 'inventory').stop()),
    );
    context.fault('inventory and billing stopped; their backlog grows');
    const ids = await insertPoison(context, 700);
    context.fault(`${ids.length} unappliable ORDER_CREATED rows committed among the orders`);
    context.expectDeadLetters({ consumerDeadLetters: ids });
    await context.sleep(1_500);
    await Promise.all(['inventory', 'billing'].map((name) => context.stack.restart(name as 'inventory')));
    context.restored('inventory and billing restarted on a backlog');
  },
};
