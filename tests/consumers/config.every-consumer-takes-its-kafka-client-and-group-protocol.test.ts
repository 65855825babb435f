// Every process that consumes (orders' replies, inventory, billing) takes its Kafka client from
// KAFKA_CLIENT, as the relays do, and its group protocol from KAFKA_GROUP_PROTOCOL, checked once at
// start-up.
import { configSchema as billing } from '@outbox/billing/config';
import { configSchema as inventory } from '@outbox/inventory/config';
import { configSchema as orders } from '@outbox/orders/config';
import { ConfigError, loadConfig } from '@outbox/runtime/config';
import { describe, expect, it } from 'vitest';

const validEnv = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/service',
  KAFKA_BROKERS: '127.0.0.1:9092',
};

describe.each([
  ['orders', orders],
  ['inventory', inventory],
  ['billing', billing],
] as const)("%s's KAFKA_CLIENT", (name, schema) => {
  it('is kafkajs unless set', () => {
    expect(loadConfig(name, schema, validEnv).KAFKA_CLIENT).toBe('kafkajs');
  });

  it('takes platformatic', () => {
    expect(loadConfig(name, schema, { ...validEnv, KAFKA_CLIENT: 'platformatic' }).KAFKA_CLIENT).toBe(
      'platformatic',
    );
  });

  it('refuses any other client at start-up, naming the variable and the choices', () => {
    const load = () => loadConfig(name, schema, { ...validEnv, KAFKA_CLIENT: 'rdkafka' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/KAFKA_CLIENT.*expected kafkajs or platformatic/s);
  });
});

describe.each([
  ['orders', orders],
  ['inventory', inventory],
  ['billing', billing],
] as const)("%s's KAFKA_GROUP_PROTOCOL", (name, schema) => {
  it('is classic unless set', () => {
    expect(loadConfig(name, schema, validEnv).KAFKA_GROUP_PROTOCOL).toBe('classic');
  });

  it('takes consumer with the platformatic client', () => {
    const env = { ...validEnv, KAFKA_CLIENT: 'platformatic', KAFKA_GROUP_PROTOCOL: 'consumer' };
    expect(loadConfig(name, schema, env).KAFKA_GROUP_PROTOCOL).toBe('consumer');
  });

  it('refuses consumer with kafkajs, saying which client speaks it', () => {
    const load = () => loadConfig(name, schema, { ...validEnv, KAFKA_GROUP_PROTOCOL: 'consumer' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/KAFKA_GROUP_PROTOCOL: consumer needs KAFKA_CLIENT=platformatic/);
  });

  it('refuses any other protocol, naming the variable and the choices', () => {
    const env = { ...validEnv, KAFKA_CLIENT: 'platformatic', KAFKA_GROUP_PROTOCOL: 'cooperative' };
    expect(() => loadConfig(name, schema, env)).toThrow(
      /KAFKA_GROUP_PROTOCOL.*expected classic or consumer/s,
    );
  });
});
