import { freePort } from '@outbox/devstack/ports';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { loadConfig } from '@outbox/runtime/config';
import { type Config, configSchema } from '../src/config.ts';

/**
 * The config of a console with no system behind it: nothing listens at the services' URLs and the
 * databases do not exist, only the test run's broker is real. For tests of what the console does on
 * its own (its controls, its Host check, its Kafka panel). `extra` adds or overrides variables.
 */
export async function bareConsoleConfig(
  topicPrefix: string,
  extra: Record<string, string> = {},
): Promise<Config> {
  const nobody = `http://127.0.0.1:${await freePort()}`;
  const missingDatabase = new URL(testPostgresUrl);
  missingDatabase.pathname = '/console_no_such_database';
  return loadConfig('console', configSchema, {
    PORT: '0',
    ORDERS_URL: nobody,
    INVENTORY_URL: nobody,
    BILLING_URL: nobody,
    RELAY_ORDERS_URL: nobody,
    RELAY_INVENTORY_URL: nobody,
    RELAY_BILLING_URL: nobody,
    ORDERS_DATABASE_URL: missingDatabase.toString(),
    INVENTORY_DATABASE_URL: missingDatabase.toString(),
    BILLING_DATABASE_URL: missingDatabase.toString(),
    KAFKA_BROKERS: sharedKafkaBrokers().join(','),
    KAFKA_TOPIC_PREFIX: topicPrefix,
    ...extra,
  });
}
