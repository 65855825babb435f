import {
  applyOnce,
  createKafka,
  ORDER_CREATED,
  type OrderCreatedV1,
  runConsumer,
  topicFor,
} from '@outbox/events';
import { loadConfigOrExit } from '@outbox/service/config';
import { createLogger } from '@outbox/service/logger';
import { createMetricsRegistry, startOpsServer } from '@outbox/service/ops-server';
import { onShutdown } from '@outbox/service/shutdown';
import { configSchema } from './config.ts';
import { createPrisma, migrate, type Tx } from './db.ts';
import { reserveStock } from './reserveStock.ts';

const config = loadConfigOrExit('inventory', configSchema);
const logger = createLogger('inventory', config.LOG_LEVEL);
if (config.MIGRATE_ON_START)
  logger.info({ applied: await migrate(config.DATABASE_URL) }, 'database migrated');

const prisma = createPrisma(config.DATABASE_URL);
const consumer = await runConsumer({
  kafka: createKafka({ clientId: 'inventory', brokers: config.KAFKA_BROKERS, logger }),
  groupId: config.KAFKA_GROUP_ID,
  topics: [topicFor('order', config.KAFKA_TOPIC_PREFIX)],
  topicPartitions: config.KAFKA_TOPIC_PARTITIONS,
  logger,
  handle: async (event) => {
    if (event.type !== ORDER_CREATED) return 'ignored';
    return applyOnce<Tx>(
      (work) => prisma.$transaction(work),
      config.KAFKA_GROUP_ID,
      event,
      async (tx) => {
        const outcome = await reserveStock(tx, event.data as OrderCreatedV1);
        logger.info({ orderId: event.subject, outcome }, 'order handled');
      },
    );
  },
});

const server = await startOpsServer({
  port: config.PORT,
  registry: createMetricsRegistry('inventory'),
  health: () => ({ status: 'ok', ...consumer.stats }),
});
logger.info({ port: config.PORT }, 'inventory consuming');

onShutdown(logger, async () => {
  await consumer.stop();
  server.close();
  await prisma.$disconnect();
});
