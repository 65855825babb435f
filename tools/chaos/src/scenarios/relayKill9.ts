import type { Scenario } from '../scenario.ts';
import { DATABASES } from '../stack.ts';
import { killAndRestart, waitUntilMidBatch } from './support.ts';

export const relayKill9: Scenario = {
  name: 'relay-kill-9',
  breaks: 'kill -9 of each relay while it holds a leased batch, restarted 1 s later',
  expectation:
    'The leased rows are claimed again when the lease (5 s here) expires and published again: ' +
    'duplicates on the topic at most, never a loss; consumers skip the duplicates.',
  inject: async (context) => {
    await context.sleep(3_000);
    for (const database of DATABASES) {
      const relay = `relay-${database}` as const;
      const midBatch = await waitUntilMidBatch(context.stack.databases[database].url, relay);
      await killAndRestart(context, relay, 1_000, midBatch ? ' (mid-batch)' : ' (between batches)');
      await context.sleep(1_500);
    }
  },
};
