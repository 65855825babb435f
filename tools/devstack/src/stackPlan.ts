import { cdcNames, type RelayMode } from './cdcRelays.ts';
import type { AppName } from './serviceProcess.ts';

/** The processes of the whole system: one per app, and one relay per service database. */
export type ProcessName =
  | 'orders'
  | 'inventory'
  | 'billing'
  | 'relay-orders'
  | 'relay-inventory'
  | 'relay-billing';

export type ProcessPlan = { name: ProcessName; app: AppName; env: Record<string, string> };

export type StackSettings = {
  /** e.g. postgresql://postgres@127.0.0.1:5432/orders, per service database. */
  databaseUrls: Record<'orders' | 'inventory' | 'billing', string>;
  kafkaBrokers: string[];
  /** Replicas of the topics the services create: 1 (the default) on one broker, 3 on the cluster. */
  kafkaReplicationFactor?: number;
  topicPrefix?: string;
  /** Prefix for consumer groups, so several stacks can share a broker. */
  groupPrefix?: string;
  /**
   * Lets every process take the test and demo switches (fault points, naive write modes), which
   * each app refuses by default: `test` for the test and chaos stacks, `demo` for the local demo.
   */
  allowFaults?: 'demo' | 'test';
  /**
   * Each service's relay mode (docs/design.md#polling-or-cdc). Default polling. A debezium relay
   * reports its connector (cdcRelays.ts names it) on Kafka Connect at `connectUrl`.
   */
  relayModes?: Partial<Record<'orders' | 'inventory' | 'billing', RelayMode>>;
  connectUrl?: string;
  /** Extra environment per service (e.g. a short poll interval in tests). */
  extraEnv?: Partial<Record<ProcessName, Record<string, string>>>;
};

/** The aggregate type each service database's outbox publishes, which names its topic (topicFor). */
export const AGGREGATE_OF: Record<'orders' | 'inventory' | 'billing', string> = {
  orders: 'order',
  inventory: 'reservation',
  billing: 'payment',
};

/** The three services first: they create and migrate the databases the relays then read. */
export const SERVICES: ProcessName[] = ['orders', 'inventory', 'billing'];
export const RELAYS: ProcessName[] = ['relay-orders', 'relay-inventory', 'relay-billing'];

/**
 * Which processes make up the system and how each is configured. Each service database has its
 * own outbox and its own relay: a relay drains exactly one database.
 */
export function planStack(settings: StackSettings): Record<ProcessName, ProcessPlan> {
  const kafka = {
    KAFKA_BROKERS: settings.kafkaBrokers.join(','),
    ...(settings.topicPrefix ? { KAFKA_TOPIC_PREFIX: settings.topicPrefix } : {}),
    ...(settings.kafkaReplicationFactor
      ? { KAFKA_REPLICATION_FACTOR: String(settings.kafkaReplicationFactor) }
      : {}),
    ...(settings.allowFaults ? { OUTBOX_ALLOW_FAULTS: settings.allowFaults } : {}),
  };
  const service = (name: 'orders' | 'inventory' | 'billing'): ProcessPlan => ({
    name,
    app: name,
    env: {
      DATABASE_URL: settings.databaseUrls[name],
      ...kafka,
      KAFKA_GROUP_ID: `${settings.groupPrefix ?? ''}${name}`,
    },
  });
  const relayMode = (of: 'orders' | 'inventory' | 'billing'): Record<string, string> => {
    const mode = settings.relayModes?.[of] ?? 'polling';
    if (mode === 'polling') return { RELAY_MODE: mode };
    if (!settings.connectUrl) throw new Error(`a debezium relay for ${of} needs connectUrl`);
    return {
      RELAY_MODE: mode,
      RELAY_CONNECT_URL: settings.connectUrl,
      RELAY_CONNECTOR: cdcNames(of).connector,
      RELAY_REPLICATION_SLOT: cdcNames(of).slot,
    };
  };
  const relay = (of: 'orders' | 'inventory' | 'billing'): ProcessPlan => ({
    name: `relay-${of}`,
    app: 'relay',
    env: { DATABASE_URL: settings.databaseUrls[of], ...kafka, RELAY_ID: `relay-${of}`, ...relayMode(of) },
  });
  const databases = ['orders', 'inventory', 'billing'] as const;
  const plans = [...databases.map(service), ...databases.map(relay)];
  return Object.fromEntries(
    plans.map((plan) => [plan.name, { ...plan, env: { ...plan.env, ...settings.extraEnv?.[plan.name] } }]),
  ) as Record<ProcessName, ProcessPlan>;
}
