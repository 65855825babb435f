// Tracing, off unless OTEL_* variables turn it on (docs/tracing.md). Start the app with
// `node --import @outbox/service/tracing-register` so http, express and pg are traced too.
import '@outbox/service/tracing-register';
import { loadConfigOrExit } from '@outbox/service/config';
import { createPool, transactionOn } from '@outbox/service/database';
import { startEventConsumer } from '@outbox/service/event-consumer';
import { createLogger } from '@outbox/service/logger';
import { createMetricsRegistry } from '@outbox/service/ops-server';
import { onShutdown } from '@outbox/service/shutdown';
import { shutdownTracing } from '@outbox/service/tracing';
import { createApp, listen } from './app.ts';
import { configSchema } from './config.ts';
import { createPrisma, migrate } from './db.ts';
import { startIdempotencyKeyRetention } from './orders/idempotencyRetention.ts';
import { EVENT_SOURCE } from './orders/placeOrder.ts';
import { replyHandlers } from './saga/replyHandlers.ts';
import { startSagaTimeout } from './saga/sagaTimeout.ts';

const config = loadConfigOrExit('orders', configSchema);
const logger = createLogger('orders', config.LOG_LEVEL);

if (config.MIGRATE_ON_START) {
  const applied = await migrate(config.DATABASE_URL);
  logger.info({ applied }, 'database migrated');
}

// The API writes through Prisma (an order and its event in one interactive transaction); the
// reply consumer applies its chunks on a pool of its own (docs/design.md, "Consumers in chunks").
const prisma = createPrisma(config.DATABASE_URL, config);
const pool = createPool(config.DATABASE_URL, config, (err) =>
  logger.warn({ err }, 'an idle database connection failed; it is replaced'),
);
const registry = createMetricsRegistry('orders');

// The saga's replies. The consumer starts in the background and retries while Kafka is away:
// the API below takes orders whether or not Kafka is reachable (that is the outbox's point).
const replies = startEventConsumer({
  source: EVENT_SOURCE,
  groupId: config.KAFKA_GROUP_ID,
  kafka: {
    brokers: config.KAFKA_BROKERS,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    topicPartitions: config.KAFKA_TOPIC_PARTITIONS,
  },
  aggregateTypes: ['reservation', 'payment'],
  transaction: transactionOn(pool),
  handlers: replyHandlers,
  logger,
  killAfterCommit: config.FAULT_KILL_AFTER_COMMIT,
  killMidChunk: config.FAULT_KILL_MID_CHUNK,
  inboxRetentionHours: config.INBOX_RETENTION_HOURS,
  inboxDedup: config.INBOX_DEDUP === 'on',
  registry,
});

const sagaTimeout = startSagaTimeout({
  prisma,
  logger,
  registry,
  timeoutMs: config.SAGA_TIMEOUT_MS,
  intervalMs: config.SAGA_SWEEP_INTERVAL_MS,
});

const app = createApp({ prisma, logger, registry, replies: () => replies.health() });
const server = await listen(app, config.PORT, config.HOST);
logger.info({ host: config.HOST, port: config.PORT }, 'orders API listening');
const retention = startIdempotencyKeyRetention({
  prisma,
  logger,
  retentionHours: config.IDEMPOTENCY_KEY_RETENTION_HOURS,
});

onShutdown(logger, async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await retention.stop();
  await replies.stop();
  await sagaTimeout.stop();
  await prisma.$disconnect();
  await pool.end();
  await shutdownTracing(); // last: export the spans of the shutdown too
});
