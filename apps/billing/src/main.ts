import {
  applyOnce,
  createKafka,
  type EventEnvelope,
  ORDER_CREATED,
  type OrderCreatedV1,
  runConsumer,
  topicFor,
} from '@outbox/events';
import { loadConfigOrExit } from '@outbox/service/config';
import { createLogger } from '@outbox/service/logger';
import { createMetricsRegistry, startOpsServer } from '@outbox/service/ops-server';
import { onShutdown } from '@outbox/service/shutdown';
import { authorizePayment } from './authorizePayment.ts';
import { configSchema } from './config.ts';
import { createPrisma, migrate, type Tx } from './db.ts';

const config = loadConfigOrExit('billing', configSchema);
const logger = createLogger('billing', config.LOG_LEVEL);
if (config.MIGRATE_ON_START)
  logger.info({ applied: await migrate(config.DATABASE_URL) }, 'database migrated');

const prisma = createPrisma(config.DATABASE_URL);
const consumer = await runConsumer({
  kafka: createKafka({ clientId: 'billing', brokers: config.KAFKA_BROKERS, logger }),
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
        const outcome = await authorizePayment(tx, event as EventEnvelope<OrderCreatedV1>);
        logger.info({ orderId: event.subject, outcome }, 'order handled');
      },
    );
  },
});

const server = await startOpsServer({
  port: config.PORT,
  registry: createMetricsRegistry('billing'),
  health: () => ({ status: 'ok', ...consumer.stats }),
});
logger.info({ port: config.PORT }, 'billing consuming');

onShutdown(logger, async () => {
  await consumer.stop();
  server.close();
  await prisma.$disconnect();
});
