import {
  type consumerServiceSchema,
  loadConfigOrExit,
  replicationWarning,
  topicLayout,
} from '@outbox/runtime/config';
import { createPool, transactionOn } from '@outbox/runtime/database';
import type { DatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { kafkaSecurity } from '@outbox/runtime/kafka-security';
import { createLogger } from '@outbox/runtime/logger';
import { createMetricsRegistry, type MetricsRegistry, startOpsServer } from '@outbox/runtime/ops-server';
import { onShutdown } from '@outbox/runtime/shutdown';
import { StandbyWait } from '@outbox/runtime/standby-wait';
import { shutdownTracing } from '@outbox/runtime/tracing';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { type EventConsumer, startEventConsumer } from './eventConsumer.ts';
import { type ConsumerFaultSwitches, faultHooks } from './faultPoints.ts';
import type { EventHandlers } from './handlers.ts';

// How every service that consumes events starts: inventory and billing through runConsumerService,
// orders (an HTTP API with a reply consumer) through startConsumerService. Tracing is not started
// here: it must be the entry module's first import (`import '@outbox/runtime/tracing-register'`),
// before anything that loads pg, to trace pg at all.

/** The settings of every consumer service (consumerServiceSchema) and its database timeouts. */
export type ConsumerServiceConfig = z.output<ReturnType<typeof consumerServiceSchema>> & DatabaseTimeouts;

export type ConsumerServiceOptions<S extends z.ZodType<ConsumerServiceConfig>> = {
  /** `inventory`: names the config errors, the logs and the metrics' `service` label. */
  name: string;
  configSchema: S;
  /** Applies the service's migrations (when MIGRATE_ON_START); returns the ones it applied. */
  migrate: (databaseUrl: string) => Promise<string[]>;
  /** The service's CloudEvents `source` (`/inventory`), for the events its handlers answer with. */
  source: string;
  /** Aggregate types whose topics to consume, e.g. `['order']` for `order.events`. */
  aggregateTypes: string[];
  /** The service's handlers, given its config and pool (for lookups before a chunk's transaction). */
  handlers: (service: { config: z.output<S>; pool: pg.Pool }) => EventHandlers<pg.PoolClient>;
  /** Test and demo switches, from the app's config (apps/<app>/src/main.ts); production has none. */
  faults?: (config: z.output<S>) => ConsumerFaultSwitches;
};

export type ConsumerService<C> = {
  config: C;
  logger: Logger;
  /** The consumer's pool: one connection per chunk in progress. */
  pool: pg.Pool;
  registry: MetricsRegistry;
  consumer: EventConsumer;
};

/**
 * The parts every consumer service has, started: config parsed from the environment (or the
 * process exits naming the bad variables), logger, migrations, the pool, the metrics registry and
 * the event consumer with its inbox retention (and the app's fault switches, in tests). The consumer starts in
 * the background and retries while Kafka is away. The caller serves and shuts down.
 */
export async function startConsumerService<S extends z.ZodType<ConsumerServiceConfig>>(
  options: ConsumerServiceOptions<S>,
): Promise<ConsumerService<z.output<S>>> {
  const config: ConsumerServiceConfig & z.output<S> = loadConfigOrExit(options.name, options.configSchema);
  const logger = createLogger(options.name, config.LOG_LEVEL);
  if (config.MIGRATE_ON_START)
    logger.info({ applied: await options.migrate(config.DATABASE_URL) }, 'database migrated');

  const pool = createPool(config.DATABASE_URL, config, (err) =>
    logger.warn({ err }, 'an idle database connection failed; it is replaced'),
  );
  const registry = createMetricsRegistry(options.name);
  const warning = replicationWarning(config);
  if (warning) logger.warn(warning);
  const faults = options.faults && faultHooks(options.faults(config));
  const consumer = startEventConsumer({
    source: options.source,
    groupId: config.KAFKA_GROUP_ID,
    kafka: {
      brokers: config.KAFKA_BROKERS,
      security: kafkaSecurity(config),
      topicPrefix: config.KAFKA_TOPIC_PREFIX,
      topicLayout: topicLayout(config),
      client: config.KAFKA_CLIENT,
      groupProtocol: config.KAFKA_GROUP_PROTOCOL,
    },
    aggregateTypes: options.aggregateTypes,
    transaction: transactionOn(pool),
    handlers: options.handlers({ config, pool }),
    logger,
    ...(faults ? { faults } : {}),
    inboxRetentionHours: config.INBOX_RETENTION_HOURS,
    commitIntervalMs: config.KAFKA_COMMIT_INTERVAL_MS,
    sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
    chunkLingerMs: config.KAFKA_CHUNK_LINGER_MS,
    ...(config.DATABASE_WAIT_FOR_STANDBY ? { untilStandbyHolds: standbyWait(config, pool, registry) } : {}),
    registry,
  });
  return { config, logger, pool, registry, consumer };
}

/** DATABASE_WAIT_FOR_STANDBY: offsets are committed once the standby holds what they acknowledge. */
function standbyWait(config: ConsumerServiceConfig, pool: pg.Pool, registry: MetricsRegistry) {
  const wait = new StandbyWait({
    pool,
    standby: config.DATABASE_WAIT_FOR_STANDBY ?? 'any',
    timeoutMs: config.DATABASE_STANDBY_WAIT_MS,
    registry,
  });
  return () => wait.untilStandbyHolds();
}

/**
 * A service that only consumes (inventory, billing): its parts (startConsumerService), the ops
 * server (/healthz with the consumer's health, /metrics) on PORT, and a graceful shutdown on
 * SIGTERM: the consumer finishes its chunks first, then the server and the pool close.
 */
export async function runConsumerService<S extends z.ZodType<ConsumerServiceConfig>>(
  options: ConsumerServiceOptions<S>,
): Promise<void> {
  const { config, logger, pool, registry, consumer } = await startConsumerService(options);
  const server = await startOpsServer({
    port: config.PORT,
    registry,
    health: () => consumer.health(),
  });
  logger.info({ port: config.PORT }, `${options.name} started`);

  onShutdown(logger, async () => {
    await consumer.stop();
    server.close();
    await pool.end();
    await shutdownTracing(); // last: export the spans of the shutdown too
  });
}
