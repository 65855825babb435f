import { OUTBOX_SESSION_OPTIONS } from '@outbox/outbox';
import { topicLayout } from '@outbox/runtime/config';
import { kafkaSecurity } from '@outbox/runtime/kafka-security';
import { createMetricsRegistry, startOpsServer } from '@outbox/runtime/ops-server';
import { onShutdown } from '@outbox/runtime/shutdown';
import { StandbyWait } from '@outbox/runtime/standby-wait';
import { shutdownTracing } from '@outbox/runtime/tracing';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { adminRoutes } from './adminRoutes.ts';
import { FaultPoints } from './faultPoints.ts';
import { createRelayMetrics } from './metrics.ts';
import { KafkaPublisher } from './publisher.ts';
import { Relay } from './relay.ts';
import { startRetention } from './retention.ts';
import { Wakeup } from './wakeup.ts';

/** The relay in its default mode (RELAY_MODE=polling): claim, publish, mark (relay.ts). */
export async function startPollingRelay(config: Config, relayId: string, logger: Logger): Promise<void> {
  const pool = new pg.Pool({
    connectionString: config.DATABASE_URL,
    max: 4,
    connectionTimeoutMillis: Math.min(5_000, config.RELAY_DB_TIMEOUT_MS),
    statement_timeout: config.RELAY_DB_TIMEOUT_MS,
    query_timeout: config.RELAY_DB_TIMEOUT_MS + 1_000, // after the server's own timeout had its chance
    idle_in_transaction_session_timeout: config.RELAY_DB_TIMEOUT_MS,
    keepAlive: true,
    // Custom plans for its named statements, and the claim on its index in order (claimSql.ts).
    options: OUTBOX_SESSION_OPTIONS,
  });
  // An idle pool connection that the server dropped (restart) must not crash the process.
  pool.on('error', (err) => logger.warn({ err }, 'idle database connection lost'));
  const registry = createMetricsRegistry('relay');
  const publisher = new KafkaPublisher({
    clientId: `relay-${relayId}`,
    brokers: config.KAFKA_BROKERS,
    security: kafkaSecurity(config),
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    topicLayout: topicLayout(config),
    logger,
  });
  const wakeup = new Wakeup(config.DATABASE_URL, logger);
  const relay = new Relay({
    pool,
    publisher,
    wakeup,
    logger,
    metrics: createRelayMetrics(registry, pool, logger),
    options: {
      id: relayId,
      batchSize: config.RELAY_BATCH_SIZE,
      minBatchSize: Math.min(config.RELAY_MIN_BATCH_SIZE, config.RELAY_BATCH_SIZE),
      leaseMs: config.RELAY_LEASE_MS,
      pollIntervalMs: config.RELAY_POLL_INTERVAL_MS,
      lingerMs: config.RELAY_LINGER_MS,
      maxAttempts: config.RELAY_MAX_ATTEMPTS,
    },
    ...(config.DATABASE_WAIT_FOR_STANDBY
      ? {
          standbyWait: new StandbyWait({
            pool,
            standby: config.DATABASE_WAIT_FOR_STANDBY,
            timeoutMs: config.DATABASE_STANDBY_WAIT_MS,
            registry,
          }),
        }
      : {}),
    // The chaos suite's kill -9 points, when its config allows RELAY_FAULT; none in production.
    ...(config.RELAY_FAULT ? { faults: new FaultPoints(config.RELAY_FAULT, logger) } : {}),
  });

  // Start even while Kafka is away: the relay retries in its loop, and says so on /healthz.
  await publisher
    .connect()
    .catch((err: unknown) => logger.warn({ err }, 'Kafka not reachable yet; will retry'));
  await wakeup
    .listen()
    .catch((err: unknown) => logger.warn({ err }, 'LISTEN failed; polling only until it works'));
  relay.start();
  const retention = startRetention(
    pool,
    logger,
    config.RELAY_RETENTION_HOURS,
    config.RELAY_RETENTION_INTERVAL_MS,
  );

  const server = await startOpsServer({
    port: config.PORT,
    registry,
    health: () => ({ relayId, mode: 'polling', ...relay.health }),
    onError: (err, path) => logger.error({ err, path }, 'ops endpoint failed'),
    ...(config.RELAY_ADMIN_TOKEN ? { routes: adminRoutes(pool, config.RELAY_ADMIN_TOKEN, logger) } : {}),
  });
  logger.info({ relayId, port: config.PORT, brokers: config.KAFKA_BROKERS }, 'relay started');

  onShutdown(logger, async () => {
    // Stop claiming and finish the batch in hand first; only then close what it needs.
    await relay.stop();
    retention.stop();
    server.close();
    await Promise.allSettled([wakeup.close(), publisher.disconnect(), pool.end()]);
    await shutdownTracing(); // last: export the spans of the shutdown too
  });
}
