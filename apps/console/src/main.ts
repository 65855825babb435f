// The console as its own process (docker compose, production): it watches the system and can
// redrive dead-lettered events; it never gets the local demo's stop/kill/start controls.
import { loadConfigOrExit } from '@outbox/runtime/config';
import { createLogger } from '@outbox/runtime/logger';
import { onShutdown } from '@outbox/runtime/shutdown';
import { configSchema } from './config.ts';
import { startConsole } from './console.ts';

const config = loadConfigOrExit('console', configSchema);
const logger = createLogger('console', config.LOG_LEVEL);

// All interfaces: in a container the console is reached through a published port.
const running = await startConsole({ config, logger, host: '0.0.0.0' });
logger.info({ url: running.url }, 'console listening');

onShutdown(logger, () => running.close());
