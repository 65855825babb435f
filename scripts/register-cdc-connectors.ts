// Registers the Debezium connector of each service whose outbox runs in debezium mode, on a Kafka
// Connect worker that is already running, with the config the local demo registers
// (packages/outbox/src/cdcConnector.ts): docker-compose.yml's one-shot `connect-register` runs it.
//   RELAY_MODE_ORDERS=debezium CONNECT_URL=http://connect:8083 \
//   CDC_DATABASE_URL_ORDERS=postgresql://postgres:postgres@postgres:5432/orders ... node scripts/register-cdc-connectors.ts
// RELAY_MODE (all) and RELAY_MODE_<SERVICE> choose the mode, as for `./dev demo`. For a service that
// polls, it deletes the connector and drops the replication slot an earlier debezium run left (an
// unread slot holds the server's WAL for ever, docs/runbooks.md#outboxreplicationslotretainingwal).
// The user of CDC_DATABASE_URL_<SERVICE> creates the publication and the connector's own role
// (outbox_cdc: replication, select and update on outbox), which the connector then reads as.

import { cdcNames, relayModes, type ServiceName } from '@outbox/devstack/cdc-relays';
import { putConnector, retireConnector, waitForConnectorRunning } from '@outbox/devstack/connect-rest';
import {
  dropReplicationSlot,
  ensureConnectorRole,
  ensureOutboxPublication,
  logicalDecodingUnavailable,
} from '@outbox/devstack/logical-decoding';
import { renderCdcConnectorConfig } from '@outbox/outbox';

const required = (variable: string): string => {
  const value = process.env[variable];
  if (!value) {
    console.error(`${variable} is not set; see the header of scripts/register-cdc-connectors.ts`);
    process.exit(64);
  }
  return value;
};

const connectUrl = required('CONNECT_URL');
const modes = relayModes(process.env);
for (const service of Object.keys(modes) as ServiceName[]) {
  const names = cdcNames(service);
  const databaseUrl = required(`CDC_DATABASE_URL_${service.toUpperCase()}`);
  if (modes[service] === 'polling') {
    // Its offsets reset too: a later debezium run then starts on a new slot (connectRest.ts).
    if (await retireConnector(connectUrl, names.connector))
      console.log(`retired connector ${names.connector}`);
    if (await dropReplicationSlot(databaseUrl, names.slot))
      console.log(`dropped replication slot ${names.slot}`);
    continue;
  }
  const unavailable = await logicalDecodingUnavailable(databaseUrl);
  if (unavailable) throw new Error(`RELAY_MODE debezium for ${service}: ${unavailable}`);
  await ensureOutboxPublication(databaseUrl, names.publication);
  await putConnector(
    connectUrl,
    names.connector,
    renderCdcConnectorConfig({
      // The connector reads as a role with the outbox's rights only (logicalDecoding.ts).
      databaseUrl: await ensureConnectorRole(databaseUrl),
      topicPrefix: process.env.KAFKA_TOPIC_PREFIX ?? '',
      topicPartitions: Number(process.env.KAFKA_TOPIC_PARTITIONS ?? 6),
      slotName: names.slot,
      publicationName: names.publication,
      serverName: names.connector,
    }),
  );
  await waitForConnectorRunning(connectUrl, names.connector, 120_000);
  console.log(`connector ${names.connector} publishes the ${service} outbox (slot ${names.slot})`);
}
