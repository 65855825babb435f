import { randomBytes } from 'node:crypto';
import { freePort } from '../ports.ts';
import { type AppName, type ServiceProcess, startService } from '../serviceProcess.ts';
import { createTestDatabase, type TestDatabase } from './testDatabase.ts';

export type Stack = {
  databases: Record<'orders' | 'inventory' | 'billing', TestDatabase>;
  services: Record<AppName, ServiceProcess>;
  topicPrefix: string;
  /** Restart one service with the same databases, topics and port (after a stop or a kill). */
  restart(app: AppName): Promise<ServiceProcess>;
  stop(): Promise<void>;
};

/**
 * The four apps as real processes against the real broker, each with a database of its own
 * created for this test file, and topics and consumer groups under a prefix of its own.
 * The services migrate their databases at start, as they do in production.
 */
export async function startStack(label: string, kafkaBrokers: string[]): Promise<Stack> {
  const topicPrefix = `${label}-${randomBytes(3).toString('hex')}.`;
  const databases = {
    orders: await createTestDatabase(`${label}_orders`),
    inventory: await createTestDatabase(`${label}_inventory`),
    billing: await createTestDatabase(`${label}_billing`),
  };
  const kafka = { KAFKA_BROKERS: kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: topicPrefix };
  const envs: Record<AppName, Record<string, string>> = {
    orders: { DATABASE_URL: databases.orders.url },
    // The orders service migrates the orders database; the relay only reads its outbox.
    relay: { DATABASE_URL: databases.orders.url, ...kafka, RELAY_POLL_INTERVAL_MS: '500' },
    inventory: { DATABASE_URL: databases.inventory.url, ...kafka, KAFKA_GROUP_ID: `${topicPrefix}inventory` },
    billing: { DATABASE_URL: databases.billing.url, ...kafka, KAFKA_GROUP_ID: `${topicPrefix}billing` },
  };
  const ports = { orders: 0, relay: 0, inventory: 0, billing: 0 };
  const services = {} as Record<AppName, ServiceProcess>;
  const start = async (app: AppName) => {
    ports[app] ||= await freePort();
    services[app] = await startService(app, envs[app], { port: ports[app], label });
    return services[app];
  };
  try {
    // Orders first: it creates the orders database's tables that the relay reads.
    await start('orders');
    await Promise.all([start('relay'), start('inventory'), start('billing')]);
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

/** Poll `check` until it returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(
  description: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
