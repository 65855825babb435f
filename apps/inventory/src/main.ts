// Tracing, off unless OTEL_* variables turn it on (docs/tracing.md). Start the app with
// `node --import @outbox/service/tracing-register` so http, express and pg are traced too.
import '@outbox/service/tracing-register';
import { loadConfigOrExit } from '@outbox/service/config';
import { createPool, transactionOn } from '@outbox/service/database';
import { startEventConsumer } from '@outbox/service/event-consumer';
import { createLogger } from '@outbox/service/logger';
import { createMetricsRegistry, startOpsServer } from '@outbox/service/ops-server';
import { onShutdown } from '@outbox/service/shutdown';
import { shutdownTracing } from '@outbox/service/tracing';
import { configSchema } from './config.ts';
import { migrate } from './db.ts';
import { inventoryHandlers } from './handlers.ts';
import { EVENT_SOURCE } from './reserveStock.ts';

const config = loadConfigOrExit('inventory', configSchema);
const logger = createLogger('inventory', config.LOG_LEVEL);
if (config.MIGRATE_ON_START)
  logger.info({ applied: await migrate(config.DATABASE_URL) }, 'database migrated');

const pool = createPool(config.DATABASE_URL, config, (err) =>
  logger.warn({ err }, 'an idle database connection failed; it is replaced'),
);
const registry = createMetricsRegistry('inventory');
const consumer = startEventConsumer({
  source: EVENT_SOURCE,
  groupId: config.KAFKA_GROUP_ID,
  kafka: {
    brokers: config.KAFKA_BROKERS,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    topicPartitions: config.KAFKA_TOPIC_PARTITIONS,
  },
  aggregateTypes: ['order'],
  transaction: transactionOn(pool),
  handlers: inventoryHandlers,
  logger,
  killAfterCommit: config.FAULT_KILL_AFTER_COMMIT,
  killMidChunk: config.FAULT_KILL_MID_CHUNK,
  inboxRetentionHours: config.INBOX_RETENTION_HOURS,
  registry,
});

const server = await startOpsServer({
  port: config.PORT,
  registry,
  health: () => consumer.health(),
});
logger.info({ port: config.PORT }, 'inventory started');

onShutdown(logger, async () => {
  await consumer.stop();
  server.close();
  await pool.end();
  await shutdownTracing(); // last: export the spans of the shutdown too
});
