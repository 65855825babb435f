/**
 * The Debezium side of the benches that put the polling relay beside CDC (cdc-latency,
 * relay-vs-debezium): a Kafka Connect worker of the bench's own, and on it the connector with the
 * config of packages/outbox/src/cdcConnector.ts over one outbox database, its slot and publication
 * named after the run, so that nothing of a run outlives it.
 */
import {
  connectorStatus,
  deleteConnector,
  putConnector,
  waitForConnectorRunning,
} from '@outbox/devstack/connect-rest';
import {
  dropPublication,
  dropReplicationSlot,
  ensureOutboxPublication,
  logicalDecodingUnavailable,
  waitForActiveSlot,
} from '@outbox/devstack/logical-decoding';
import { eventually } from '@outbox/devstack/testing/stack';
import { startTestConnectWorker } from '@outbox/devstack/testing/test-connect-worker';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { renderCdcConnectorConfig } from '@outbox/outbox';

/** Stops the bench before any set-up when the server cannot decode its WAL (wal_level=logical). */
export async function requireLogicalDecoding(): Promise<void> {
  const unavailable = await logicalDecodingUnavailable(testPostgresUrl);
  if (unavailable) throw new Error(unavailable);
}

export type CdcWorker = Awaited<ReturnType<typeof startCdcWorker>>;

/** A Connect worker on `brokers`; `connect(…)` runs the outbox connector, `dispose()` removes it all. */
export async function startCdcWorker(label: string, brokers: string[], log: (message: string) => void) {
  const worker = await startTestConnectWorker(label, brokers);
  let running: { name: string; databaseUrl: string } | undefined;
  return {
    url: worker.worker.url,
    /** The connector `name` (also its slot, publication and server name) publishing under `topicPrefix`. */
    async connect(name: string, databaseUrl: string, topicPrefix: string, partitions: number): Promise<void> {
      await ensureOutboxPublication(databaseUrl, name, log);
      running = { name, databaseUrl };
      const config = renderCdcConnectorConfig({
        databaseUrl,
        topicPrefix,
        topicPartitions: partitions,
        slotName: name,
        publicationName: name,
        serverName: name,
      });
      await putConnector(worker.worker.url, name, config);
      await waitForConnectorRunning(worker.worker.url, name);
      await waitForActiveSlot(databaseUrl, name);
    },
    /** `PUT /connectors/<name>/pause` or `/resume` (asynchronous, 202), then waits for the state. */
    async setPaused(paused: boolean): Promise<void> {
      const name = running?.name;
      const verb = paused ? 'pause' : 'resume';
      const res = await fetch(`${worker.worker.url}/connectors/${name}/${verb}`, {
        method: 'PUT',
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) throw new Error(`Kafka Connect: ${verb} ${name}: HTTP ${res.status}`);
      const state = paused ? 'PAUSED' : 'RUNNING';
      await eventually(`connector ${name} ${state}`, async () => {
        const status = await connectorStatus(worker.worker.url, name ?? '');
        return status?.connector.state === state && status.tasks.every((t) => t.state === state)
          ? true
          : undefined;
      });
    },
    async dispose(): Promise<void> {
      if (running) await deleteConnector(worker.worker.url, running.name).catch(() => false);
      await worker.dispose();
      if (!running) return;
      await dropReplicationSlot(running.databaseUrl, running.name);
      await dropPublication(running.databaseUrl, running.name);
    },
  };
}
