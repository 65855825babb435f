import type { Health } from '@outbox/runtime/ops-server';

/**
 * The relay in debezium mode (RELAY_MODE=debezium, docs/design.md#polling-or-cdc): a Debezium
 * connector on Kafka Connect publishes the outbox, so this process claims nothing. It stays the
 * service's relay on /healthz: it says which mode runs and how the connector is doing, from
 * Connect's REST API (`GET /connectors/<name>/status`).
 */

type ConnectorStatus = {
  connector: { state: string; trace?: string };
  tasks: { id: number; state: string; trace?: string }[];
};

export type CdcRelayHealth = Health & {
  mode: 'debezium';
  connector: string;
  /** The connector's state and its tasks', as Connect reports them (RUNNING, PAUSED, FAILED...). */
  connectorState?: string;
  taskStates?: string[];
  lastError?: string;
};

/** `ok` only while the connector and every one of its tasks run. */
export async function cdcRelayHealth(connectUrl: string, connector: string): Promise<CdcRelayHealth> {
  const base = { mode: 'debezium' as const, connector };
  let res: Response;
  try {
    res = await fetch(`${connectUrl}/connectors/${encodeURIComponent(connector)}/status`, {
      signal: AbortSignal.timeout(2000),
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ...base,
      status: 'degraded',
      lastError: `Kafka Connect not reachable at ${connectUrl}: ${reason}`,
    };
  }
  if (res.status === 404) {
    return {
      ...base,
      status: 'degraded',
      lastError: `connector ${connector} is not registered on Kafka Connect at ${connectUrl}`,
    };
  }
  if (!res.ok) return { ...base, status: 'degraded', lastError: `Kafka Connect answered HTTP ${res.status}` };
  const status = (await res.json()) as ConnectorStatus;
  const taskStates = status.tasks.map((task) => task.state);
  const running =
    status.connector.state === 'RUNNING' && taskStates.length > 0 && taskStates.every((s) => s === 'RUNNING');
  const failed = [status.connector, ...status.tasks].find((part) => part.state === 'FAILED');
  return {
    ...base,
    status: running ? 'ok' : 'degraded',
    connectorState: status.connector.state,
    taskStates,
    ...(failed?.trace ? { lastError: failed.trace.split('\n')[0] } : {}),
  };
}
