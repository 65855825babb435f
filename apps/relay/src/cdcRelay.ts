import { createMetricsRegistry, type Health, startOpsServer } from '@outbox/runtime/ops-server';
import { onShutdown } from '@outbox/runtime/shutdown';
import pg from 'pg';
import type { Logger } from 'pino';
import { createCdcMetrics } from './cdcMetrics.ts';
import { startCdcRetention } from './cdcRetention.ts';
import type { Config } from './config.ts';
import { type ReplicationSlot, readReplicationSlot } from './replicationSlot.ts';

/**
 * The relay in debezium mode (RELAY_MODE=debezium, docs/design.md#polling-or-cdc): a Debezium
 * connector on Kafka Connect publishes the outbox, so this process claims nothing. It stays the
 * service's relay: on /healthz and /metrics it says which mode runs, how the connector is doing
 * (Connect's REST API, `GET /connectors/<name>/status`) and what its replication slot holds
 * (PostgreSQL's pg_replication_slots); and it deletes the rows the slot has confirmed
 * (cdcRetention.ts), since nothing else ever would.
 */

type ConnectorStatus = {
  connector: { state: string; trace?: string };
  tasks: { id: number; state: string; trace?: string }[];
};

type ConnectorHealth = {
  connectorRunning: boolean;
  /** The connector's state and its tasks', as Connect reports them (RUNNING, PAUSED, FAILED...). */
  connectorState?: string;
  taskStates?: string[];
  lastError?: string;
};

export type CdcRelayHealth = Health &
  ConnectorHealth & {
    mode: 'debezium';
    connector: string;
    /** The replication slot, when it exists and could be read. */
    slot?: ReplicationSlot;
    slotError?: string;
  };

export async function connectorHealth(connectUrl: string, connector: string): Promise<ConnectorHealth> {
  let res: Response;
  try {
    res = await fetch(`${connectUrl}/connectors/${encodeURIComponent(connector)}/status`, {
      signal: AbortSignal.timeout(2000),
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { connectorRunning: false, lastError: `Kafka Connect not reachable at ${connectUrl}: ${reason}` };
  }
  if (res.status === 404) {
    return {
      connectorRunning: false,
      lastError: `connector ${connector} is not registered on Kafka Connect at ${connectUrl}`,
    };
  }
  if (!res.ok) return { connectorRunning: false, lastError: `Kafka Connect answered HTTP ${res.status}` };
  const status = (await res.json()) as ConnectorStatus;
  const taskStates = status.tasks.map((task) => task.state);
  const failed = [status.connector, ...status.tasks].find((part) => part.state === 'FAILED');
  return {
    connectorRunning:
      status.connector.state === 'RUNNING' &&
      taskStates.length > 0 &&
      taskStates.every((s) => s === 'RUNNING'),
    connectorState: status.connector.state,
    taskStates,
    ...(failed?.trace ? { lastError: failed.trace.split('\n')[0] } : {}),
  };
}

async function slotHealth(pool: pg.Pool, slot: string): Promise<Pick<CdcRelayHealth, 'slot' | 'slotError'>> {
  try {
    const read = await readReplicationSlot(pool, slot);
    if (read) return { slot: read };
    return { slotError: `replication slot ${slot} does not exist: the connector creates it when it starts` };
  } catch (error) {
    return {
      slotError: `cannot read replication slot ${slot}: ${error instanceof Error ? error.message : error}`,
    };
  }
}

/** `ok` only while the connector and every one of its tasks run, and a reader holds the slot. */
export async function cdcRelayHealth(
  pool: pg.Pool,
  settings: { connectUrl: string; connector: string; slot: string },
): Promise<CdcRelayHealth> {
  const [connector, slot] = await Promise.all([
    connectorHealth(settings.connectUrl, settings.connector),
    slotHealth(pool, settings.slot),
  ]);
  const ok = connector.connectorRunning && slot.slot?.active === true;
  return {
    status: ok ? 'ok' : 'degraded',
    mode: 'debezium',
    connector: settings.connector,
    ...connector,
    ...slot,
  };
}

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
