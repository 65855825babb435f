import type { Scenario } from '../scenario.ts';
import { startAndAwaitCrash } from './support.ts';

const CRASHES = 3;

export const relayCrashAfterPublish: Scenario = {
  name: 'relay-crash-after-publish',
  breaks: `relay-orders killed (kill -9) right after the broker acknowledged a batch and before it marked it published, ${CRASHES} times`,
  expectation:
    'Each time, the acknowledged batch is still leased in the outbox; once the lease expires it is published ' +
    'again: those events are on the topic twice, first deliveries still in order, each applied once.',
  inject: async (context) => {
    await context.sleep(2_000);
    await context.stack.process('relay-orders').stop();
    for (let crash = 1; crash <= CRASHES; crash++) {
      context.fault(`relay-orders started with RELAY_FAULT=crash-after-publish:3 (crash ${crash})`);
      const crashed = await startAndAwaitCrash(context, 'relay-orders', {
        RELAY_FAULT: 'crash-after-publish:3',
      });
      context.log(crashed ? 'relay-orders killed itself after the ack' : 'fault did not fire');
    }
    await context.stack.restart('relay-orders');
    context.restored('relay-orders started without the fault');
  },
};
