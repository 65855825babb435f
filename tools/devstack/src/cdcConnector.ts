import { type CdcConnectorOptions, renderCdcConnectorConfig } from '@outbox/outbox';
import { putConnector, waitForConnectorRunning } from './connectRest.ts';
import { ensureConnectorRole, ensureOutboxPublication, waitForActiveSlot } from './logicalDecoding.ts';

/**
 * Publish one outbox through Debezium from now on: its publication, its connector (registered and
 * RUNNING, with the wire mapping of packages/outbox/src/cdcConnector.ts), its replication slot
 * active. Only then is a new row certain to be published: the connector streams what is committed
 * once its slot exists (snapshot.mode=no_data).
 */
export async function registerOutboxConnector(
  connectUrl: string,
  connector: string,
  options: CdcConnectorOptions,
  log: (message: string) => void = () => {},
): Promise<void> {
  await ensureOutboxPublication(options.databaseUrl, options.publicationName, log);
  // The connector reads as a role of its own with the outbox's rights only, not as `databaseUrl`'s user.
  const asConnectorRole = await ensureConnectorRole(options.databaseUrl);
  await putConnector(
    connectUrl,
    connector,
    renderCdcConnectorConfig({ ...options, databaseUrl: asConnectorRole }),
  );
  await waitForConnectorRunning(connectUrl, connector, 120_000);
  await waitForActiveSlot(options.databaseUrl, options.slotName);
}
