import { ConfigError, loadConfig } from '@outbox/runtime/config';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../src/config.ts';

const validEnv = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/orders',
  KAFKA_BROKERS: '127.0.0.1:9092',
};

describe("the relay's KAFKA_CLIENT", () => {
  it('is kafkajs unless set', () => {
    expect(loadConfig('relay', configSchema, validEnv).KAFKA_CLIENT).toBe('kafkajs');
  });

  it('takes platformatic', () => {
    expect(
      loadConfig('relay', configSchema, { ...validEnv, KAFKA_CLIENT: 'platformatic' }).KAFKA_CLIENT,
    ).toBe('platformatic');
  });

  it('refuses any other client at start-up, naming the variable and the choices', () => {
    let error: unknown;
    try {
      loadConfig('relay', configSchema, { ...validEnv, KAFKA_CLIENT: 'rdkafka' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain('KAFKA_CLIENT');
    expect((error as ConfigError).message).toContain('expected kafkajs or platformatic');
  });
});
