import { createMetricsRegistry, startOpsServer } from '@outbox/runtime/ops-server';
import { onShutdown } from '@outbox/runtime/shutdown';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { cdcRelayHealth } from './cdcHealth.ts';
import { createCdcMetrics } from './cdcMetrics.ts';
import { startCdcRetention } from './cdcRetention.ts';

/**
 * The relay in debezium mode (RELAY_MODE=debezium, docs/design.md#polling-or-cdc): a Debezium
 * connector on Kafka Connect publishes the outbox, so this process claims nothing. It stays the
 * service's relay: on /healthz and /metrics it says which mode runs, how the connector is doing
 * (Connect's REST API, `GET /connectors/<name>/status`) and what its replication slot holds
 * (PostgreSQL's pg_replication_slots); and it deletes the rows the slot has confirmed
 * (cdcRetention.ts), since nothing else ever would.
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
    max: 2,
    connectionTimeoutMillis: Math.min(5_000, config.RELAY_DB_TIMEOUT_MS),
    statement_timeout: config.RELAY_DB_TIMEOUT_MS,
    query_timeout: config.RELAY_DB_TIMEOUT_MS + 1_000,
    keepAlive: true,
  });
  pool.on('error', (err) => logger.warn({ err }, 'idle database connection lost'));
  const registry = createMetricsRegistry('relay');
  const health = () => cdcRelayHealth(pool, settings);
  const metrics = createCdcMetrics(registry, health);
  const retention = startCdcRetention({
    pool,
    slot: settings.slot,
    retentionHours: config.RELAY_RETENTION_HOURS,
    intervalMs: config.RELAY_RETENTION_INTERVAL_MS,
    logger,
    onDeleted: (count) => metrics.retentionDeleted.inc(count),
  });
  const server = await startOpsServer({
    port: config.PORT,
    registry,
    health: async () => ({ relayId, ...(await health()) }),
    onError: (err, path) => logger.error({ err, path }, 'ops endpoint failed'),
  });
  logger.info({ relayId, port: config.PORT, ...settings }, 'relay started in debezium mode');
  onShutdown(logger, async () => {
    retention.stop();
    server.close();
    await pool.end();
  });
}
