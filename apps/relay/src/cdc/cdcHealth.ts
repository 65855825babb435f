import type { Health } from '@outbox/runtime/ops-server';
import type pg from 'pg';
import { type ReplicationSlot, readReplicationSlot } from './replicationSlot.ts';

/**
 * What the relay in debezium mode says of its connector (Connect's REST API,
 * `GET /connectors/<name>/status`) and of its replication slot (pg_replication_slots): read by
 * /healthz and, once per scrape, by the metrics (cdcMetrics.ts).
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

/** Where Connect's REST API is, and the `Authorization` header it wants, if any. */
export type ConnectEndpoint = { url: string; authorization?: string };

/** The basic authentication header of a user and password (RELAY_CONNECT_USER, RELAY_CONNECT_PASSWORD). */
export function basicAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export async function connectorHealth(connect: ConnectEndpoint, connector: string): Promise<ConnectorHealth> {
  const connectUrl = connect.url;
  let res: Response;
  try {
    res = await fetch(`${connectUrl}/connectors/${encodeURIComponent(connector)}/status`, {
      signal: AbortSignal.timeout(2000),
      ...(connect.authorization ? { headers: { authorization: connect.authorization } } : {}),
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
  if (res.status === 401 || res.status === 403) {
    return {
      connectorRunning: false,
      lastError: `Kafka Connect at ${connectUrl} refused the relay (HTTP ${res.status}): check RELAY_CONNECT_USER and RELAY_CONNECT_PASSWORD`,
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
    if (read?.active && !read.readerVisible) {
      return {
        slot: read,
        slotError: `cannot see the reader of replication slot ${slot}, so no row is marked published: grant pg_read_all_stats to this relay's role`,
      };
    }
    if (read) return { slot: read };
    return { slotError: `replication slot ${slot} does not exist: the connector creates it when it starts` };
  } catch (error) {
    return {
      slotError: `cannot read replication slot ${slot}: ${error instanceof Error ? error.message : error}`,
    };
  }
}

/** `ok` only while the connector and every one of its tasks run, and a reader this role can see holds the slot. */
export async function cdcRelayHealth(
  pool: pg.Pool,
  settings: { connect: ConnectEndpoint; connector: string; slot: string },
): Promise<CdcRelayHealth> {
  const [connector, slot] = await Promise.all([
    connectorHealth(settings.connect, settings.connector),
    slotHealth(pool, settings.slot),
  ]);
  const ok = connector.connectorRunning && slot.slot?.active === true && slot.slotError === undefined;
  return {
    status: ok ? 'ok' : 'degraded',
    mode: 'debezium',
    connector: settings.connector,
    ...connector,
    ...slot,
  };
}
