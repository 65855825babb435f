// The single broker broken under load: killed, stopped past the producers' timeouts, slowed down.
import type { Scenario } from '../scenario.ts';
import { brokerOutage } from './support.ts';

export const brokerKill9: Scenario = {
  name: 'broker-kill-9',
  breaks: 'kill -9 of the Kafka broker mid-stream, restarted 5 s later',
  expectation:
    'The API keeps accepting orders (their events wait in the outboxes); relays and consumers back off; ' +
    'after the restart the backlog drains in order and every event is applied once.',
  needs: { ownBroker: true },
  inject: (context) =>
    brokerOutage(context, {
      afterMs: 4_000,
      downMs: 5_000,
      how: 'kill -9 the broker',
      back: 'start the broker again (same data dir)',
    }),
};

export const brokerStoppedLong: Scenario = {
  name: 'broker-stopped-long',
  breaks: 'the Kafka broker stopped for 12 s, far longer than the producer timeouts (a few seconds)',
  expectation:
    'Relays give their batches back without using up attempts (nothing is dead-lettered for an outage), ' +
    'report degraded and back off; orders are accepted throughout; after the restart everything drains.',
  needs: { ownBroker: true },
  inject: (context) =>
    brokerOutage(context, {
      afterMs: 3_000,
      downMs: 12_000,
      how: 'stop the broker (SIGTERM)',
      back: 'start the broker again',
    }),
};

const LATENCY_MS = 150;

export const slowBroker: Scenario = {
  name: 'slow-broker',
  breaks: `${LATENCY_MS} ms added each way between every client and the broker for 10 s (a loopback proxy the broker advertises)`,
  expectation:
    'Publishing and consuming slow down and the backlog grows, but nothing times out into a dead letter ' +
    'and no lease expires under a send; once the latency goes, the backlog drains.',
  needs: { ownBroker: true, brokerLatencyMs: 0 },
  inject: async (context) => {
    const proxy = context.brokerProxy;
    const megabytes = () => `${(proxy.bytesForwarded / 1e6).toFixed(1)} MB through the proxy so far`;
    await context.sleep(3_000);
    context.fault(`broker latency ${LATENCY_MS} ms each way (${megabytes()})`);
    proxy.latencyMs = LATENCY_MS;
    await context.sleep(10_000);
    proxy.latencyMs = 0;
    context.restored(`latency removed (${megabytes()})`);
  },
};
