import type { Scenario } from '../scenario.ts';
import { ownBroker } from './support.ts';

export const brokerKill9: Scenario = {
  name: 'broker-kill-9',
  breaks: 'kill -9 of the Kafka broker mid-stream, restarted 5 s later',
  expectation:
    'The API keeps accepting orders (their events wait in the outboxes); relays and consumers back off; ' +
    'after the restart the backlog drains in order and every event is applied once.',
  needs: { ownBroker: true },
  inject: async (context) => {
    const broker = ownBroker(context);
    await context.sleep(4_000);
    context.fault('kill -9 the broker');
    await broker.kill();
    await context.sleep(5_000);
    context.fault('start the broker again (same data dir)');
    await broker.start();
    await broker.waitUntilReady(120_000);
    context.restored('broker ready');
  },
};
