import { randomBytes } from 'node:crypto';
import { freePort } from '@outbox/devstack/ports';
import { type ServiceProcess, startService, startTogether } from '@outbox/devstack/service-process';
import { type ProcessName as PlannedProcess, type ProcessPlan, planStack } from '@outbox/devstack/stack-plan';
import type { KafkaClientName, KafkaGroupProtocol } from '@outbox/runtime/kafka';
import { createDatabase, type ScenarioDatabase, withApplicationName } from './database.ts';

export type DatabaseName = 'orders' | 'inventory' | 'billing';
export const DATABASES: DatabaseName[] = ['orders', 'inventory', 'billing'];

/** A process of the stack: a service, its own relay (`relay-orders`) or an extra one (`relay-orders-2`). */
export type ProcessName = PlannedProcess | `relay-${DatabaseName}-${number}` | `${DatabaseName}-${number}`;

export type StackOptions = {
  label: string;
  kafkaBrokers: string[];
  /** 3 on a cluster: the topics the services create are replicated three times. */
  kafkaReplicationFactor?: number;
  /** Admin URL of the PostgreSQL server the databases are created on. */
  postgresUrl: string;
  /** A database on another server than postgresUrl (the orders database on a primary/standby pair). */
  databaseServers?: Partial<Record<DatabaseName, string>>;
  /** Extra environment per process (an extra relay gets its stack relay's). */
  env?: Partial<Record<ProcessName, Record<string, string>>>;
  /** Extra relays per database, next to the stack's own: they compete for the same outbox. */
  extraRelays?: Partial<Record<DatabaseName, number>>;
  /**
   * Extra instances of a service (`inventory-2`…), in the same consumer group: the group shares
   * the partitions among them and moves a dead one's to the others. The load goes to `orders`.
   */
  extraInstances?: Partial<Record<DatabaseName, number>>;
  /**
   * Every outbox is published by CDC (docs/design.md#polling-or-cdc): the relays start in debezium
   * mode, claim nothing and report their connector on Kafka Connect at this URL (ownConnect.ts).
   */
  connectUrl?: string;
  /** With connectUrl: each outbox's replication slot, which its relay watches (RELAY_REPLICATION_SLOT). */
  replicationSlots?: Record<DatabaseName, string>;
  /**
   * KAFKA_CLIENT of every process: the services, their extra instances and every relay, so that a
   * run compares one client against the other, not a mix. Unset: each process's default (kafkajs).
   */
  kafkaClient?: KafkaClientName;
  /** KAFKA_GROUP_PROTOCOL of every consumer: the services and their extra instances (the relays consume nothing). */
  groupProtocol?: KafkaGroupProtocol;
};

export type ChaosStack = {
  databases: Record<DatabaseName, ScenarioDatabase>;
  topicPrefix: string;
  /** Consumer groups (also the consumers' names in processed_events). */
  groups: Record<DatabaseName, string>;
  process(name: ProcessName): ServiceProcess;
  /** Every process of the stack, by name. */
  names(): ProcessName[];
  /** Stopped or killed through the stack and not restarted since: not expected to answer. */
  expectedDown(name: ProcessName): boolean;
  /**
   * Start a process again (after kill or stop) on the same port, with extra environment if given,
   * within `timeoutMs` (startService's 30 s when not given).
   */
  restart(name: ProcessName, extraEnv?: Record<string, string>, timeoutMs?: number): Promise<ServiceProcess>;
  stop(): Promise<void>;
};

/**
 * The whole system as real processes, like devstack's startStack, with what the chaos scenarios
 * need on top: databases on any PostgreSQL server (a private one for the restart scenario), extra
 * relays on one outbox, and relays that connect as `application_name=<relay name>`, so a scenario
 * can find and terminate exactly their connections.
 */
export async function startChaosStack(options: StackOptions): Promise<ChaosStack> {
  const { label } = options;
  const topicPrefix = `chaos-${label}-${randomBytes(3).toString('hex')}.`;
  const databases = {} as Record<DatabaseName, ScenarioDatabase>;
  for (const name of DATABASES)
    databases[name] = await createDatabase(
      options.databaseServers?.[name] ?? options.postgresUrl,
      label,
      name,
    );
  const { plans, groups } = planChaosStack(options, databaseUrlsOf({ databases }), topicPrefix);

  const processes = new Map<ProcessName, ServiceProcess>();
  const ports = new Map<ProcessName, number>();
  const down = new Set<ProcessName>();
  /** The process, with stop() and kill() noting that it is down on purpose (see opsScraper.ts). */
  const watched = (name: ProcessName, service: ServiceProcess): ServiceProcess => {
    const wrapper: ServiceProcess = Object.create(service);
    wrapper.stop = () => {
      down.add(name);
      return service.stop();
    };
    wrapper.kill = () => {
      down.add(name);
      return service.kill();
    };
    return wrapper;
  };
  const start = async (name: ProcessName, extraEnv?: Record<string, string>, timeoutMs?: number) => {
    const plan = plans.get(name);
    if (!plan) throw new Error(`no process named ${name} in this stack`);
    const port = ports.get(name) ?? (await freePort());
    ports.set(name, port);
    down.add(name); // until it answers
    const how = { port, label: `chaos-${label}`, name, ...(timeoutMs ? { timeoutMs } : {}) };
    const service = watched(name, await startService(plan.app, { ...plan.env, ...extraEnv }, how));
    processes.set(name, service);
    down.delete(name);
    return service;
  };
  const stopAll = () => Promise.allSettled([...processes.values()].map((service) => service.stop()));

  try {
    const services = [...plans.keys()].filter((name) => !name.startsWith('relay-'));
    await startTogether(services, start);
    const relays = [...plans.keys()].filter((name) => name.startsWith('relay-'));
    await startTogether(relays, start);
  } catch (err) {
    await Promise.allSettled([...processes.values()].map((service) => service.kill()));
    await Promise.allSettled(Object.values(databases).map((db) => db.drop()));
    throw err;
  }
  return {
    databases,
    topicPrefix,
    groups,
    process: (name) => {
      const service = processes.get(name);
      if (!service) throw new Error(`no process named ${name} in this stack`);
      return service;
    },
    names: () => [...processes.keys()],
    expectedDown: (name) => down.has(name),
    restart: start,
    stop: async () => {
      await stopAll();
      await Promise.allSettled(Object.values(databases).map((db) => db.drop()));
    },
  };
}

export function databaseUrlsOf({ databases }: Pick<ChaosStack, 'databases'>): Record<DatabaseName, string> {
  return { orders: databases.orders.url, inventory: databases.inventory.url, billing: databases.billing.url };
}

/**
 * Every process of the stack and its environment, before anything starts: devstack's plan, an
 * extra instance or relay with the environment of the one it copies, the run's KAFKA_CLIENT on all
 * of them and its KAFKA_GROUP_PROTOCOL on the services.
 */
export function planChaosStack(
  options: StackOptions,
  databaseUrls: Record<DatabaseName, string>,
  topicPrefix: string,
): { plans: Map<ProcessName, ProcessPlan>; groups: Record<DatabaseName, string> } {
  const base = planStack({
    databaseUrls,
    kafkaBrokers: options.kafkaBrokers,
    ...(options.kafkaReplicationFactor ? { kafkaReplicationFactor: options.kafkaReplicationFactor } : {}),
    topicPrefix,
    groupPrefix: topicPrefix,
    allowFaults: 'test',
    ...(options.connectUrl
      ? {
          relayModes: { orders: 'debezium', inventory: 'debezium', billing: 'debezium' },
          connectUrl: options.connectUrl,
        }
      : {}),
  });

  const env = options.env ?? {};
  const client: Record<string, string> = options.kafkaClient ? { KAFKA_CLIENT: options.kafkaClient } : {};
  const protocol: Record<string, string> = options.groupProtocol
    ? { KAFKA_GROUP_PROTOCOL: options.groupProtocol }
    : {};
  const plans = new Map<ProcessName, ProcessPlan>();
  // Each service and its extra instances, with the service's environment.
  for (const database of DATABASES) {
    const plan = base[database];
    for (const name of withCopies(database, options.extraInstances?.[database]))
      plans.set(name, { ...plan, env: { ...plan.env, ...protocol, ...env[database], ...client } });
  }
  // Each outbox's own relay and its extra ones, all connecting under their own application_name.
  for (const database of DATABASES) {
    const own = base[`relay-${database}`];
    for (const name of withCopies(own.name, options.extraRelays?.[database])) {
      const relayEnv = {
        ...own.env,
        DATABASE_URL: withApplicationName(databaseUrls[database], name),
        RELAY_ID: name,
        ...(options.replicationSlots ? { RELAY_REPLICATION_SLOT: options.replicationSlots[database] } : {}),
        // Chaos runs are short: a killed relay's batch is taken over after 5 s instead of 30 s,
        // still well above the producer's few-second send timeout (docs/design.md).
        RELAY_LEASE_MS: '5000',
        RELAY_POLL_INTERVAL_MS: '500',
        // Keep published rows: the invariant checker reads them after the run.
        RELAY_RETENTION_HOURS: '0',
      };
      plans.set(name, { ...own, env: { ...relayEnv, ...env[own.name], ...client } });
    }
  }
  const groups = {
    orders: base.orders.env.KAFKA_GROUP_ID ?? '',
    inventory: base.inventory.env.KAFKA_GROUP_ID ?? '',
    billing: base.billing.env.KAFKA_GROUP_ID ?? '',
  };
  return { plans, groups };
}

/** A process and `extra` copies of it beside it (`inventory-2`, `relay-orders-2`, …). */
function withCopies<Name extends ProcessName>(name: Name, extra = 0): (Name | `${Name}-${number}`)[] {
  return [name, ...Array.from({ length: extra }, (_, i) => `${name}-${i + 2}` as const)];
}
