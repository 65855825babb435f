import type { Scenario } from '../scenario.ts';
import { DATABASES } from '../stack.ts';
import { startAndAwaitCrash } from './support.ts';

export const consumerKillMidChunk: Scenario = {
  name: 'consumer-kill-mid-chunk',
  breaks:
    'inventory, billing and orders each stopped while the load runs, so a backlog builds, then restarted with a fault ' +
    'that kills them (kill -9) inside the transaction of their first chunk of two events or more, before COMMIT',
  expectation:
    'The chunk dies whole: none of its reservations, payments, replies or processed_events rows is kept. The restarted ' +
    'consumer reads the same events again and applies each once.',
  inject: async (context) => {
    await context.sleep(3_000);
    await Promise.all(
      DATABASES.map(async (name) => {
        await context.stack.process(name).stop();
        context.fault(`${name} stopped; its backlog grows`);
        await context.sleep(2_000);
        context.fault(`${name} restarted with FAULT_KILL_MID_CHUNK=true`);
        const crashed = await startAndAwaitCrash(
          context,
          name,
          { FAULT_KILL_MID_CHUNK: 'true' },
          { timeoutMs: 60_000, trigger: true },
        );
        if (crashed) context.fault(`${name} killed itself mid-chunk`);
        else context.log(`${name}: fault did not fire`);
        await context.stack.restart(name);
      }),
    );
    context.restored('inventory, billing and orders restarted without the fault');
  },
};
