// Tracing, off unless OTEL_* variables turn it on (docs/tracing.md). Start the app with
// `node --import @outbox/runtime/tracing-register` so http, express and pg are traced too.
import '@outbox/runtime/tracing-register';
import { hostname } from 'node:os';
import { loadConfigOrExit } from '@outbox/runtime/config';
import { createLogger } from '@outbox/runtime/logger';
import { createMetricsRegistry, startOpsServer } from '@outbox/runtime/ops-server';
import { onShutdown } from '@outbox/runtime/shutdown';
import { cdcRelayHealth } from './cdcRelay.ts';
import { configSchema } from './config.ts';
import { startPollingRelay } from './pollingRelay.ts';

const config = loadConfigOrExit('relay', configSchema);
const logger = createLogger('relay', config.LOG_LEVEL);
const relayId = config.RELAY_ID ?? `${hostname()}-${process.pid}`;

if (config.RELAY_MODE === 'polling') {
  await startPollingRelay(config, relayId, logger);
} else {
  // debezium: a connector on Kafka Connect publishes this outbox (docs/design.md#polling-or-cdc);
  // this process only says so on /healthz. The config guarantees both settings in this mode.
  const connectUrl = config.RELAY_CONNECT_URL ?? '';
  const connector = config.RELAY_CONNECTOR ?? '';
  const server = await startOpsServer({
    port: config.PORT,
    registry: createMetricsRegistry('relay'),
    health: async () => ({ relayId, ...(await cdcRelayHealth(connectUrl, connector)) }),
    onError: (err, path) => logger.error({ err, path }, 'ops endpoint failed'),
  });
  logger.info({ relayId, port: config.PORT, connectUrl, connector }, 'relay started in debezium mode');
  onShutdown(logger, async () => {
    server.close();
  });
}
