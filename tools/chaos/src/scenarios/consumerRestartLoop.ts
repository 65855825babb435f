import type { Scenario } from '../scenario.ts';
import type { DatabaseName } from '../stack.ts';

const ROUNDS: { name: DatabaseName; how: 'kill' | 'stop' }[] = [
  { name: 'inventory', how: 'stop' },
  { name: 'billing', how: 'stop' },
  { name: 'orders', how: 'stop' },
  { name: 'inventory', how: 'kill' },
  { name: 'billing', how: 'stop' },
  { name: 'inventory', how: 'stop' },
  { name: 'billing', how: 'kill' },
];

export const consumerRestartLoop: Scenario = {
  name: 'consumer-restart-loop',
  breaks: 'consumers restarted over and over under load: SIGTERM and kill -9, one every 2 s',
  expectation:
    'A graceful stop commits the offset of the event in hand and leaves the group; a kill -9 leaves it ' +
    'uncommitted and the group waits out the session: either way no event is skipped or applied twice.',
  inject: async (context) => {
    await context.sleep(2_000);
    for (const { name, how } of ROUNDS) {
      context.fault(`${how === 'kill' ? 'kill -9' : 'SIGTERM'} ${name}, then start it again`);
      const process = context.stack.process(name);
      await (how === 'kill' ? process.kill() : process.stop());
      await context.stack.restart(name);
      await context.sleep(2_000);
    }
    context.restored('last consumer restarted');
  },
};
