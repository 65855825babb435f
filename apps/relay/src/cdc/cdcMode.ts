import { readAutovacuumWarning } from '@outbox/runtime/database';
import { createMetricsRegistry, startOpsServer } from '@outbox/runtime/ops-server';
import { onShutdown } from '@outbox/runtime/shutdown';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { createRelayMetrics } from '../engine/metrics.ts';
import { Relay } from '../engine/relay.ts';
import { kafkaPublisher, outboxPool, relayLoopOptions, startOutboxRetention } from '../engine/relayParts.ts';
import { Wakeup } from '../engine/wakeup.ts';
import { startCdcConfirmation } from './cdcConfirmation.ts';
import { basicAuthorization, type ConnectEndpoint, cdcRelayHealth } from './cdcHealth.ts';
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
  const connect = connectEndpoint(config);
  // The config guarantees these three in this mode.
  const settings = {
    connect,
    connector: config.RELAY_CONNECTOR ?? '',
    slot: config.RELAY_REPLICATION_SLOT ?? '',
  };
  // The drain runs the polling relay's claim: the same session settings (relayParts.ts).
  const pool = outboxPool(config, logger, 3);
  const registry = createMetricsRegistry('relay');
  const health = () => cdcRelayHealth(pool, settings);
  const metrics = createCdcMetrics(registry, health, pool);
  const { drainer, publisher } = createDrainer(config, pool, relayId, logger);
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
  const retention = startOutboxRetention(config, pool, logger);
  // A warning on /healthz, not a failure: the retention's deletes leave dead rows for vacuum.
  const autovacuum = await readAutovacuumWarning(pool);
  const server = await startOpsServer({
    port: config.PORT,
    registry,
    health: async () => ({
      relayId,
      kafkaClient: publisher.kafkaClient,
      ...(await health()),
      ...(autovacuum ? { warnings: [autovacuum] } : {}),
    }),
    onError: (err, path) => logger.error({ err, path }, 'ops endpoint failed'),
  });
  logger.info(
    {
      relayId,
      port: config.PORT,
      connectUrl: connect.url,
      connector: settings.connector,
      slot: settings.slot,
    },
    'relay started in debezium mode',
  );
  onShutdown(logger, async () => {
    retention.stop();
    await confirmation.stop();
    server.close();
    await Promise.allSettled([publisher.disconnect(), pool.end()]);
  });
}

/** Connect's REST API: its URL (which holds no credentials, the config makes sure) and basic authentication. */
function connectEndpoint(config: Config): ConnectEndpoint {
  const { RELAY_CONNECT_USER: user, RELAY_CONNECT_PASSWORD: password } = config;
  return {
    url: config.RELAY_CONNECT_URL ?? '',
    ...(user && password ? { authorization: basicAuthorization(user, password) } : {}),
  };
}

/**
 * The drain's relay: the polling relay's claim, publish and mark, never started as a loop but
 * stepped by drainUpTo. Its metrics stay off /metrics: the polling relay's backlog alerts would
 * read the rows waiting for the slot's confirmation as stuck (docs/design.md#polling-or-cdc).
 */
function createDrainer(config: Config, pool: pg.Pool, relayId: string, logger: Logger) {
  const publisher = kafkaPublisher(config, relayId, logger);
  const drainer = new Relay({
    pool,
    publisher,
    wakeup: new Wakeup(config.DATABASE_URL, logger),
    logger,
    metrics: createRelayMetrics(createMetricsRegistry('relay-drain'), pool, logger),
    // Stepped, not looped: every claim asks for a whole batch, and nothing lingers.
    options: {
      ...relayLoopOptions(config, `${relayId}-drain`),
      minBatchSize: config.RELAY_BATCH_SIZE,
      lingerMs: 0,
    },
  });
  return { drainer, publisher };
}
