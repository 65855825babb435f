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
import { EVENT_SOURCE } from './authorizePayment.ts';
import { configSchema } from './config.ts';
import { migrate } from './db.ts';
import { billingHandlers } from './handlers.ts';
import { PaymentProvider } from './paymentProvider.ts';

const config = loadConfigOrExit('billing', configSchema);
const logger = createLogger('billing', config.LOG_LEVEL);
if (config.MIGRATE_ON_START)
  logger.info({ applied: await migrate(config.DATABASE_URL) }, 'database migrated');

const pool = createPool(config.DATABASE_URL, config, (err) =>
  logger.warn({ err }, 'an idle database connection failed; it is replaced'),
);
const registry = createMetricsRegistry('billing');
const provider = new PaymentProvider({
  limitCents: config.PAYMENT_LIMIT_CENTS,
  faultRate: config.PAYMENT_FAULT_RATE,
  latencyMs: config.PAYMENT_LATENCY_MS,
  timeoutMs: config.PAYMENT_TIMEOUT_MS,
  remember: config.PAYMENT_KEYS_REMEMBERED,
});
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
  handlers: billingHandlers(pool, provider),
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
logger.info({ port: config.PORT }, 'billing started');

onShutdown(logger, async () => {
  await consumer.stop();
  server.close();
  await pool.end();
  await shutdownTracing(); // last: export the spans of the shutdown too
});
