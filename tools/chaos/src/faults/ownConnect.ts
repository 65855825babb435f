import { randomBytes } from 'node:crypto';
import { registerOutboxConnector } from '@outbox/devstack/cdc-connector';
import { cdcNames } from '@outbox/devstack/cdc-relays';
import { connectorStatus, deleteConnector, waitForConnectorRunning } from '@outbox/devstack/connect-rest';
import type { ConnectWorker } from '@outbox/devstack/connect-worker';
import {
  dropPublication,
  dropReplicationSlot,
  logicalDecodingUnavailable,
} from '@outbox/devstack/logical-decoding';
import { startTestConnectWorker } from '@outbox/devstack/testing/test-connect-worker';
import { DATABASES, type DatabaseName } from '../stack.ts';

/** The services' KAFKA_TOPIC_PARTITIONS (their default): the topics Connect creates must match. */
const TOPIC_PARTITIONS = 6;
const PUBLICATION = cdcNames('orders').publication;

export type OwnConnect = {
  worker: ConnectWorker;
  /** Exactly-once source support on the worker and required by every connector. */
  exactlyOnce: boolean;
  /** Connector per outbox: the relays in debezium mode report these (stackPlan's cdcNames). */
  connectors: Record<DatabaseName, string>;
  /** Replication slot per outbox: unique on the server, which other runs and engineers share. */
  slots: Record<DatabaseName, string>;
  /**
   * Publish each outbox through its connector, from now on: creates the publication, registers the
   * connector and waits until it runs and its slot is active. The databases must be migrated.
   */
  register(databaseUrls: Record<DatabaseName, string>, topicPrefix: string): Promise<void>;
  /** Until every connector and every task is RUNNING (after a restart of the worker, say). */
  waitUntilRunning(timeoutMs?: number): Promise<void>;
  /** Deletes the connectors, stops the worker, drops the slots and publications, its topics and folder. */
  dispose(): Promise<void>;
};

/**
 * The CDC relay of a scenario (`needs.cdc`): a Kafka Connect worker of its own on the scenario's
 * broker, with one Debezium connector per outbox once `register` is called. The worker is started
 * here, before the stack, so that its JVM warms up while the services start; the connectors come
 * after the services have migrated their databases.
 */
export async function startOwnConnect(
  label: string,
  brokers: string[],
  { exactlyOnce = false }: { exactlyOnce?: boolean } = {},
): Promise<OwnConnect> {
  const run = randomBytes(3).toString('hex');
  const { worker, dispose: disposeWorker } = await startTestConnectWorker(`chaos-${label}-${run}`, brokers, {
    exactlyOnceSource: exactlyOnce,
  });
  const name = worker.name;
  const connectors = Object.fromEntries(
    DATABASES.map((database) => [database, cdcNames(database).connector]),
  ) as Record<DatabaseName, string>;
  // PostgreSQL cuts names at 63 bytes: the label's head, the run and the longest database name fit.
  const slot = `chaos_${label.replaceAll(/[^a-z0-9]/g, '_').slice(0, 36)}_${run}`;
  const slots = Object.fromEntries(DATABASES.map((database) => [database, `${slot}_${database}`])) as Record<
    DatabaseName,
    string
  >;
  let registered: Record<DatabaseName, string> | undefined;

  const waitUntilRunning = async (timeoutMs = 120_000) => {
    await Promise.all(
      DATABASES.map((database) => waitForConnectorRunning(worker.url, connectors[database], timeoutMs)),
    );
  };

  return {
    worker,
    exactlyOnce,
    connectors,
    slots,
    register: async (databaseUrls, topicPrefix) => {
      registered = databaseUrls;
      for (const database of DATABASES) {
        const reason = await logicalDecodingUnavailable(databaseUrls[database]);
        if (reason) throw new Error(`needs.cdc: ${reason}`);
      }
      await Promise.all(
        DATABASES.map((database) =>
          registerOutboxConnector(worker.url, connectors[database], {
            databaseUrl: databaseUrls[database],
            topicPrefix,
            topicPartitions: TOPIC_PARTITIONS,
            slotName: slots[database],
            publicationName: PUBLICATION,
            serverName: `${name}-${database}`,
            exactlyOnce,
          }),
        ),
      );
    },
    waitUntilRunning,
    dispose: async () => {
      if (worker.isRunning()) {
        for (const database of DATABASES)
          await deleteConnector(worker.url, connectors[database]).catch(() => false);
      }
      // Stops the worker, deletes its internal topics and its folder.
      await disposeWorker().catch(() => {});
      // The worker first: once it is gone nothing holds the slots.
      if (registered) {
        for (const database of DATABASES) {
          await dropReplicationSlot(registered[database], slots[database]).catch(() => false);
          await dropPublication(registered[database], PUBLICATION).catch(() => {});
        }
      }
    },
  };
}

/** Every connector's state and its tasks', e.g. `outbox-orders RUNNING [FAILED]`, for the timeline. */
export async function describeConnectors(connect: OwnConnect): Promise<string> {
  const parts: string[] = [];
  for (const database of DATABASES) {
    const status = await connectorStatus(connect.worker.url, connect.connectors[database]).catch(
      () => undefined,
    );
    parts.push(
      `${connect.connectors[database]} ${status?.connector.state ?? '?'} [${status?.tasks.map((t) => t.state).join(',') ?? ''}]`,
    );
  }
  return parts.join(', ');
}
