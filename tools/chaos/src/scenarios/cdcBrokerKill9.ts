import type { Scenario } from '../scenario.ts';
import { awaitConnectorsRunning, ownBroker } from './support.ts';

export const cdcBrokerKill9: Scenario = {
  name: 'cdc-broker-kill-9',
  breaks:
    'CDC mode: kill -9 of the Kafka broker mid-stream (the Connect worker keeps its state there too), restarted 5 s later',
  expectation:
    'The API keeps accepting orders; the connectors cannot send nor commit offsets while the broker is away and ' +
    'retry; after the restart they go on from the WAL without an operator, and every event is applied once.',
  needs: { ownBroker: true, cdc: true },
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
    await awaitConnectorsRunning(context);
  },
};
