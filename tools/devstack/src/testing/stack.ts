import { randomBytes } from 'node:crypto';
import { freePort } from '../ports.ts';
import { eventually } from '../processes.ts';
import { type ServiceProcess, startService, startTogether } from '../serviceProcess.ts';
import { type ProcessName, planStack, RELAYS, SERVICES, type StackSettings } from '../stackPlan.ts';
import { sharedKafkaBrokers } from './testBroker.ts';
import { createTestDatabase, type TestDatabase } from './testDatabase.ts';

export { eventually };

export type Stack = {
  databases: Record<'orders' | 'inventory' | 'billing', TestDatabase>;
  services: Record<ProcessName, ServiceProcess>;
  topicPrefix: string;
  /** Start one service again with the same databases, topics and port (after a stop or a kill). */
  restart(name: ProcessName, extraEnv?: Record<string, string>): Promise<ServiceProcess>;
  stop(): Promise<void>;
};

/**
 * The whole system as real processes against the real broker (three services, three relays),
 * each service with a database of its own created for this test file, and topics and consumer
 * groups under a prefix of its own. The services migrate their databases at start, as in production.
 */
export async function startStack(
  label: string,
  kafkaBrokers: string[],
  extraEnv?: StackSettings['extraEnv'],
  options: {
    /**
     * What the processes get as DATABASE_URL for a database created for them (e.g. the same
     * database through a pooler), after any preparation of it; the database's own URL by default.
     */
    reachDatabase?: (url: string) => Promise<string>;
  } = {},
): Promise<Stack> {
  const topicPrefix = `${label}-${randomBytes(3).toString('hex')}.`;
  const reach = options.reachDatabase ?? (async (url: string) => url);
  const databases = {} as Stack['databases'];
  const databaseUrls = {} as Record<keyof Stack['databases'], string>;
  for (const name of ['orders', 'inventory', 'billing'] as const) {
    databases[name] = await createTestDatabase(`${label}_${name}`);
    databaseUrls[name] = await reach(databases[name].url);
  }
  const plans = planStack({
    databaseUrls,
    kafkaBrokers,
    topicPrefix,
    groupPrefix: topicPrefix,
    allowFaults: 'test',
    extraEnv: {
      ...extraEnv,
      ...Object.fromEntries(
        RELAYS.map((name) => [name, { RELAY_POLL_INTERVAL_MS: '500', ...extraEnv?.[name] }]),
      ),
    },
  });
  const ports: Partial<Record<ProcessName, number>> = {};
  const services = {} as Record<ProcessName, ServiceProcess>;
  const start = async (name: ProcessName, env?: Record<string, string>) => {
    const plan = plans[name];
    ports[name] ??= await freePort();
    const port = ports[name];
    services[name] = await startService(plan.app, { ...plan.env, ...env }, { port, label, name });
    return services[name];
  };
  try {
    await startTogether(SERVICES, start);
    await startTogether(RELAYS, start);
  } catch (err) {
    await Promise.allSettled(Object.values(services).map((service) => service.kill()));
    await Promise.allSettled(Object.values(databases).map((db) => db.drop()));
    throw err;
  }
  return {
    databases,
    services,
    topicPrefix,
    restart: start,
    stop: async () => {
      await Promise.allSettled(Object.values(services).map((service) => service.stop()));
      await Promise.allSettled(Object.values(databases).map((db) => db.drop()));
    },
  };
}

/**
 * The orders API alone, on `databaseUrl`, against the shared test broker with topics and a consumer
 * group of its own: for tests of the API's own behaviour that need no relay and no consumer.
 */
export async function startOrdersAlone(
  label: string,
  databaseUrl: string,
  extraEnv: Record<string, string> = {},
): Promise<ServiceProcess> {
  const prefix = `${label}-${randomBytes(3).toString('hex')}.`;
  return startService(
    'orders',
    {
      DATABASE_URL: databaseUrl,
      KAFKA_BROKERS: sharedKafkaBrokers().join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      KAFKA_GROUP_ID: `${prefix}orders`,
      ...extraEnv,
    },
    { port: await freePort(), label, name: 'orders' },
  );
}
