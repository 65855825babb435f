// Tracing, off unless OTEL_* variables turn it on (docs/tracing.md). Start the app with
// `node --import @outbox/runtime/tracing-register` so http, express and pg are traced too.
import '@outbox/runtime/tracing-register';
import { hostname } from 'node:os';
import { loadConfigOrExit } from '@outbox/runtime/config';
import { createLogger } from '@outbox/runtime/logger';
import { cdcMode } from './cdc/cdcMode.ts';
import { configSchema } from './config.ts';
import { pollingMode } from './polling/pollingMode.ts';
import { runRelay } from './processShell.ts';

const config = loadConfigOrExit('relay', configSchema);
const logger = createLogger('relay', config.LOG_LEVEL);
const relayId = config.RELAY_ID ?? `${hostname()}-${process.pid}`;

// debezium: a connector on Kafka Connect publishes this outbox (docs/design.md#polling-or-cdc).
await runRelay(config, relayId, logger, config.RELAY_MODE === 'polling' ? pollingMode : cdcMode);
