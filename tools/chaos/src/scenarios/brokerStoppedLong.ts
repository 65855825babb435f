import type { Scenario } from '../scenario.ts';
import { ownBroker } from './support.ts';

export const brokerStoppedLong: Scenario = {
  name: 'broker-stopped-long',
  breaks: 'the Kafka broker stopped for 12 s, far longer than the producer timeouts (a few seconds)',
  expectation:
    'Relays give their batches back without using up attempts (nothing is dead-lettered for an outage), ' +
    'report degraded and back off; orders are accepted throughout; after the restart everything drains.',
  needs: { ownBroker: true },
  inject: async (context) => {
    const broker = ownBroker(context);
    await context.sleep(3_000);
    context.fault('stop the broker (SIGTERM)');
    await broker.stop();
    await context.sleep(12_000);
    context.fault('start the broker again');
    await broker.start();
    await broker.waitUntilReady(120_000);
    context.restored('broker ready');
  },
};
