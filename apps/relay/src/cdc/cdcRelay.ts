import { OUTBOX_SESSION_OPTIONS } from '@outbox/outbox';
import { topicLayout } from '@outbox/runtime/config';
import { kafkaSecurity } from '@outbox/runtime/kafka-security';
import { createMetricsRegistry, startOpsServer } from '@outbox/runtime/ops-server';
import { onShutdown } from '@outbox/runtime/shutdown';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { createRelayMetrics } from '../polling/metrics.ts';
import { KafkaPublisher } from '../polling/publisher.ts';
import { Relay } from '../polling/relay.ts';
import { startRetention } from '../polling/retention.ts';
import { Wakeup } from '../polling/wakeup.ts';
import { startCdcConfirmation } from './cdcConfirmation.ts';
import { cdcRelayHealth } from './cdcHealth.ts';
import { createCdcMetrics } from './cdcMetrics.ts';

/**
 * The relay in debezium mode (RELAY_MODE=debezium, docs/design.md#polling-or-cdc): a Debezium
 * connector on Kafka Connect publishes the outbox from the WAL. This process stays the service's
 * relay: it publishes, with the polling relay's own code, the rows the connector's slot cannot
 * stream (written before the slot existed), and marks rows published once the slot has confirmed
 * them (cdcConfirmation.ts), so that retention deletes only published rows as in polling mode; on
 * /healthz and /metrics it says how the connector is doing (Connect's REST API,
 * `GET /connectors/<name>/status`) and what its replication slot holds (pg_replication_slots).
 */
export async function startCdcRelay(config: Config, relayId: string, logger: Logger): Promise<void> {
  // The config guarantees these three in this mode.
  const settings = {
    connectUrl: config.RELAY_CONNECT_URL ?? '',
    connector: config.RELAY_CONNECTOR ?? '',
    slot: config.RELAY_REPLICATION_SLOT ?? '',
  };
  const pool = new pg.Pool({
    connectionString: config.DATABASE_URL,
    max: 3,
    connectionTimeoutMillis: Math.min(5_000, config.RELAY_DB_TIMEOUT_MS),
    statement_timeout: config.RELAY_DB_TIMEOUT_MS,
    query_timeout: config.RELAY_DB_TIMEOUT_MS + 1_000,
    idle_in_transaction_session_timeout: config.RELAY_DB_TIMEOUT_MS,
    keepAlive: true,
    // The drain runs the polling relay's claim (outboxStore.ts).
    options: OUTBOX_SESSION_OPTIONS,
  });
  pool.on('error', (err) => logger.warn({ err }, 'idle database connection lost'));
  const registry = createMetricsRegistry('relay');
  const health = () => cdcRelayHealth(pool, settings);
  const metrics = createCdcMetrics(registry, health, pool);
  const publisher = new KafkaPublisher({
    clientId: `relay-${relayId}`,
    brokers: config.KAFKA_BROKERS,
    security: kafkaSecurity(config),
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    topicLayout: topicLayout(config),
    logger,
  });
  // The drain's relay: never started as a loop, stepped by drainUpTo. Its metrics stay off
  // /metrics: the polling relay's backlog alerts would read an idle outbox's unconfirmed tail as
  // stuck (docs/design.md#polling-or-cdc).
  const drainer = new Relay({
    pool,
    publisher,
    wakeup: new Wakeup(config.DATABASE_URL, logger),
    logger,
    metrics: createRelayMetrics(createMetricsRegistry('relay-drain'), pool, logger),
    options: {
      id: `${relayId}-drain`,
      batchSize: config.RELAY_BATCH_SIZE,
      leaseMs: config.RELAY_LEASE_MS,
      pollIntervalMs: config.RELAY_POLL_INTERVAL_MS,
      maxAttempts: config.RELAY_MAX_ATTEMPTS,
    },
  });
  await publisher
    .connect()
    .catch((err: unknown) => logger.warn({ err }, 'Kafka not reachable yet; will retry'));
  const confirmation = startCdcConfirmation({
    pool,
    relay: drainer,
    slot: settings.slot,
    intervalMs: config.RELAY_CDC_CONFIRM_INTERVAL_MS,
    pollIntervalMs: config.RELAY_POLL_INTERVAL_MS,
    logger,
    onMarked: (count) => metrics.confirmed.inc(count),
    onDrained: (count) => metrics.drained.inc(count),
  });
  // Rows are published (by the drain or on the slot's confirmation) before they can be deleted.
  const retention = startRetention(
    pool,
    logger,
    config.RELAY_RETENTION_HOURS,
    config.RELAY_RETENTION_INTERVAL_MS,
  );
  const server = await startOpsServer({
    port: config.PORT,
    registry,
    health: async () => ({ relayId, ...(await health()) }),
    onError: (err, path) => logger.error({ err, path }, 'ops endpoint failed'),
  });
  logger.info({ relayId, port: config.PORT, ...settings }, 'relay started in debezium mode');
  onShutdown(logger, async () => {
    retention.stop();
    await confirmation.stop();
    server.close();
    await Promise.allSettled([publisher.disconnect(), pool.end()]);
  });
}
