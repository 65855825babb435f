import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from './processes.ts';

/**
 * The few calls of Kafka Connect's REST API the devstack makes: register (or update) a connector,
 * read its status, stop, reset, resume or delete it. `baseUrl` is a worker's, e.g. ConnectWorker.url.
 */

type ConnectorStatus = {
  name: string;
  connector: { state: string; trace?: string };
  tasks: { id: number; state: string; trace?: string }[];
};

/**
 * `<method> /connectors/<name><path>`, with `body` as JSON. Resolves with the answer when it is a
 * success or a 404 (no such connector: each caller says what that means); throws on anything else.
 */
async function call(baseUrl: string, method: string, name: string, path: string, body?: unknown) {
  const res = await fetch(`${baseUrl}/connectors/${encodeURIComponent(name)}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  if (res.ok || res.status === 404) return res;
  const error = new Error(
    `Kafka Connect: ${method} ${path || '/'} of connector ${name}: HTTP ${res.status} ${await res.text()}`,
  );
  throw Object.assign(error, { status: res.status });
}

/**
 * `PUT /connectors/<name>/config`: creates the connector or replaces its config. A worker that has
 * just started answers 409 until it has joined its group (a rebalance is in progress): retried
 * until `timeoutMs`.
 */
export async function putConnector(
  baseUrl: string,
  name: string,
  config: Record<string, string>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await call(baseUrl, 'PUT', name, '/config', config);
      return;
    } catch (error) {
      const status = (error as { status?: number }).status;
      if ((status !== 409 && status !== 503) || Date.now() >= deadline) throw error;
    }
    await sleep(250);
  }
}

/** `GET /connectors/<name>/status`, or undefined while the worker does not know the connector. */
export async function connectorStatus(baseUrl: string, name: string): Promise<ConnectorStatus | undefined> {
  const res = await call(baseUrl, 'GET', name, '/status');
  return res.status === 404 ? undefined : ((await res.json()) as ConnectorStatus);
}

/**
 * Waits until the connector and all its tasks are RUNNING. Fails at once, with the task's stack
 * trace, when one is FAILED (a wrong config usually shows here, not at registration).
 */
export async function waitForConnectorRunning(
  baseUrl: string,
  name: string,
  timeoutMs = 60_000,
): Promise<void> {
  let last: ConnectorStatus | undefined;
  await eventually(
    () => `connector ${name} RUNNING; last status: ${JSON.stringify(last)}`,
    async () => {
      last = await connectorStatus(baseUrl, name).catch(() => undefined);
      const failed = [last?.connector, ...(last?.tasks ?? [])].find((part) => part?.state === 'FAILED');
      if (failed) throw new Error(`Connector ${name} failed:\n${failed.trace ?? '(no trace)'}`);
      const tasks = last?.tasks ?? [];
      return (
        (last?.connector.state === 'RUNNING' &&
          tasks.length > 0 &&
          tasks.every((t) => t.state === 'RUNNING')) ||
        undefined
      );
    },
    timeoutMs,
  );
}

/** `DELETE /connectors/<name>`; resolves false if there was no such connector. */
export async function deleteConnector(baseUrl: string, name: string): Promise<boolean> {
  return (await call(baseUrl, 'DELETE', name, '')).status !== 404;
}

/**
 * `POST /connectors/<name>/restart?includeTasks=true&onlyFailed=true`: what an operator does once
 * the cause of a FAILED task is fixed. Connect restarts only the failed instances; a task resumes
 * from its last committed source offset.
 */
export async function restartFailedTasks(baseUrl: string, name: string): Promise<void> {
  const res = await call(baseUrl, 'POST', name, '/restart?includeTasks=true&onlyFailed=true');
  if (res.status === 404) throw new Error(`Kafka Connect: no connector ${name} to restart`);
}

/**
 * `PUT /connectors/<name>/stop`, then waits until it is STOPPED: its tasks are shut down, so its
 * replication slot has no reader, and its offsets may be reset (resetConnectorOffsets).
 */
export async function stopConnector(baseUrl: string, name: string, timeoutMs = 60_000): Promise<void> {
  await call(baseUrl, 'PUT', name, '/stop');
  const stopped = async () => {
    const status = await connectorStatus(baseUrl, name);
    return (status?.connector.state === 'STOPPED' && status.tasks.length === 0) || undefined;
  };
  await eventually(`connector ${name} STOPPED`, stopped, timeoutMs);
}

/**
 * `DELETE /connectors/<name>/offsets` of a STOPPED connector (KIP-875). Debezium keeps the WAL
 * position it published up to in Connect's offsets, under the connector's name, even after the
 * connector is deleted; a slot created again (dropped, or lost in a failover) no longer has that
 * position, and the connector then refuses to start ("no longer available on the server"). Without
 * offsets it starts from its new slot, and the relay publishes what was written before
 * (docs/design.md#polling-or-cdc).
 */
export async function resetConnectorOffsets(baseUrl: string, name: string): Promise<void> {
  await call(baseUrl, 'DELETE', name, '/offsets');
}

/** `PUT /connectors/<name>/resume`: a PAUSED or STOPPED connector runs again. */
export async function resumeConnector(baseUrl: string, name: string): Promise<void> {
  await call(baseUrl, 'PUT', name, '/resume');
}

/**
 * Removes a connector for good: stopped, its offsets reset, deleted. Its slot stays: drop it
 * afterwards (logicalDecoding.ts, dropReplicationSlot). Registering a connector of the same name
 * later then starts from a new slot instead of failing on the old one's position. Resolves false
 * if there was no such connector.
 */
export async function retireConnector(baseUrl: string, name: string): Promise<boolean> {
  if ((await connectorStatus(baseUrl, name)) === undefined) return false;
  await stopConnector(baseUrl, name);
  await resetConnectorOffsets(baseUrl, name);
  return deleteConnector(baseUrl, name);
}
