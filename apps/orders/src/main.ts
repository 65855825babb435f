import { loadConfigOrExit } from '@outbox/service/config';
import { createLogger } from '@outbox/service/logger';
import { createMetricsRegistry } from '@outbox/service/ops-server';
import { onShutdown } from '@outbox/service/shutdown';
import { createApp } from './app.ts';
import { configSchema } from './config.ts';
import { createPrisma, migrate } from './db.ts';

const config = loadConfigOrExit('orders', configSchema);
const logger = createLogger('orders', config.LOG_LEVEL);

if (config.MIGRATE_ON_START) {
  const applied = await migrate(config.DATABASE_URL);
  logger.info({ applied }, 'database migrated');
}

const prisma = createPrisma(config.DATABASE_URL);
const app = createApp({ prisma, logger, registry: createMetricsRegistry('orders') });
const server = app.listen(config.PORT, () => logger.info({ port: config.PORT }, 'orders API listening'));

onShutdown(logger, async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await prisma.$disconnect();
});
