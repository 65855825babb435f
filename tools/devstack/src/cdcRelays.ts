import { registerOutboxConnector } from './cdcConnector.ts';
import { retireConnector } from './connectRest.ts';
import { ConnectWorker } from './connectWorker.ts';
import { dropReplicationSlot, logicalDecodingUnavailable } from './logicalDecoding.ts';

/**
 * The demo's relay per service database, polling or CDC (docs/design.md#polling-or-cdc): which
 * mode each service's outbox uses, and for the debezium ones a Kafka Connect worker with one
 * connector per database, registered before the relays start.
 */

export type ServiceName = 'orders' | 'inventory' | 'billing';
export type RelayMode = 'polling' | 'debezium';

const SERVICES: ServiceName[] = ['orders', 'inventory', 'billing'];

/**
 * `RELAY_MODE` for every service (default polling), `RELAY_MODE_ORDERS` (…_INVENTORY, …_BILLING)
 * for one. Throws, naming the variable, on anything else.
 */
export function relayModes(env: Record<string, string | undefined>): Record<ServiceName, RelayMode> {
  const parse = (variable: string, fallback: RelayMode): RelayMode => {
    const value = env[variable];
    if (value === undefined || value === '') return fallback;
    if (value === 'polling' || value === 'debezium') return value;
    throw new Error(`${variable}=${value}: expected polling or debezium`);
  };
  const all = parse('RELAY_MODE', 'polling');
  return Object.fromEntries(
    SERVICES.map((service) => [service, parse(`RELAY_MODE_${service.toUpperCase()}`, all)]),
  ) as Record<ServiceName, RelayMode>;
}

/** Names of one service's CDC relay: its connector, replication slot and publication. */
export function cdcNames(service: ServiceName): { connector: string; slot: string; publication: string } {
  return { connector: `outbox-${service}`, slot: `outbox_${service}`, publication: 'outbox_cdc' };
}

type CdcRelaysOptions = {
  modes: Record<ServiceName, RelayMode>;
  databaseUrls: Record<ServiceName, string>;
  brokers: string[];
  /** Kafka Connect's REST port. */
  connectPort: number;
  /** The worker's name (ConnectWorkerOptions.name). Default 'demo'. */
  workerName?: string;
  topicPrefix: string;
  topicPartitions: number;
  /** Where to say what is set up or changed. */
  log: (message: string) => void;
};

/**
 * For every debezium service: checks wal_level, creates its outbox publication and registers its
 * connector on a Connect worker started here (resolves once each runs). For every polling service:
 * deletes the connector and drops the replication slot an earlier debezium run left, since the
 * polling relay publishes its outbox now and an unread slot would hold the server's WAL for ever.
 * Resolves with the worker, or undefined when no service uses debezium. The databases must be
 * migrated (the services' start does it).
 */
export async function startCdcRelays(options: CdcRelaysOptions): Promise<ConnectWorker | undefined> {
  const cdc = SERVICES.filter((service) => options.modes[service] === 'debezium');
  const polling = SERVICES.filter((service) => options.modes[service] === 'polling');
  // The worker of an earlier run may still be running; its pid file tells.
  const worker = new ConnectWorker({
    brokers: options.brokers,
    port: options.connectPort,
    ...(options.workerName ? { name: options.workerName } : {}),
  });
  if (cdc.length > 0) {
    for (const service of cdc) {
      const reason = await logicalDecodingUnavailable(options.databaseUrls[service]);
      if (reason) throw new Error(`RELAY_MODE debezium for ${service}: ${reason}`);
    }
    if (!worker.isRunning()) await worker.start();
    await worker.waitUntilReady(120_000);
  }
  for (const service of polling) {
    const names = cdcNames(service);
    // The worker starts every connector its config topic lists, this one too, until it is deleted;
    // and with its offsets kept, a later debezium run would refuse to start on a new slot.
    if (worker.isRunning() && (await retireConnector(worker.url, names.connector))) {
      options.log(`connect: deleted connector ${names.connector} of an earlier run (${service} now polls)`);
    }
    if (await dropReplicationSlot(options.databaseUrls[service], names.slot)) {
      options.log(
        `postgres: dropped replication slot ${names.slot} of an earlier run (${service} now polls)`,
      );
    }
  }
  for (const service of cdc) {
    const names = cdcNames(service);
    await registerOutboxConnector(
      worker.url,
      names.connector,
      {
        databaseUrl: options.databaseUrls[service],
        topicPrefix: options.topicPrefix,
        topicPartitions: options.topicPartitions,
        slotName: names.slot,
        publicationName: names.publication,
        serverName: names.connector,
      },
      options.log,
    );
    options.log(`connect: connector ${names.connector} publishes the ${service} outbox (slot ${names.slot})`);
  }
  return cdc.length > 0 ? worker : undefined;
}
