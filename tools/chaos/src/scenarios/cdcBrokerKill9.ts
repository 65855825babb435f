import type { Scenario } from '../scenario.ts';
import { brokerKill9 } from './brokerKill9.ts';
import { awaitConnectorsRunning } from './support.ts';

export const cdcBrokerKill9: Scenario = {
  name: 'cdc-broker-kill-9',
  breaks:
    'CDC mode: kill -9 of the Kafka broker mid-stream (the Connect worker keeps its state there too), restarted 5 s later',
  expectation:
    'The API keeps accepting orders; the connectors cannot send nor commit offsets while the broker is away and ' +
    'retry; after the restart they go on from the WAL without an operator, and every event is applied once.',
  needs: { ownBroker: true, cdc: true },
  // The polling scenario's fault, then the connectors back to RUNNING.
  inject: async (context) => {
    await brokerKill9.inject(context);
    await awaitConnectorsRunning(context);
  },
};
