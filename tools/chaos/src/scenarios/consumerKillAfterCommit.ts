import type { Scenario } from '../scenario.ts';
import { DATABASES } from '../stack.ts';
import { startAndAwaitCrash } from './support.ts';

export const consumerKillAfterCommit: Scenario = {
  name: 'consumer-kill-after-commit',
  breaks:
    'inventory, billing and orders each killed (kill -9) right after an event’s transaction committed and before its Kafka offset did',
  expectation:
    'The event is delivered again to the restarted consumer (after the dead member’s session times out), ' +
    'found in processed_events and skipped: no second reservation, payment, reply or history entry.',
  inject: async (context) => {
    await context.sleep(3_000);
    await Promise.all(
      DATABASES.map(async (name) => {
        await context.stack.process(name).stop();
        context.fault(`${name} restarted with FAULT_KILL_AFTER_COMMIT=true`);
        const crashed = await startAndAwaitCrash(
          context,
          name,
          { FAULT_KILL_AFTER_COMMIT: 'true' },
          { timeoutMs: 60_000, trigger: true },
        );
        context.log(crashed ? `${name} killed itself after its commit` : `${name}: fault did not fire`);
        await context.stack.restart(name);
      }),
    );
    context.restored('inventory, billing and orders restarted without the fault');
  },
};
