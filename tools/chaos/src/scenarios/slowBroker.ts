import type { Scenario } from '../scenario.ts';

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
    if (!proxy) throw new Error('needs.brokerLatencyMs');
    const megabytes = () => `${(proxy.bytesForwarded / 1e6).toFixed(1)} MB through the proxy so far`;
    await context.sleep(3_000);
    context.fault(`broker latency ${LATENCY_MS} ms each way (${megabytes()})`);
    proxy.latencyMs = LATENCY_MS;
    await context.sleep(10_000);
    proxy.latencyMs = 0;
    context.restored(`latency removed (${megabytes()})`);
  },
};
