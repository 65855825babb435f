import { ConfigError, loadConfig } from '@outbox/runtime/config';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../src/config.ts';

/**
 * The relay's timers (packages/runtime/test/config.refuses-timers-longer-than-node-can-wait.test.ts
 * says why): a value Node cannot wait is refused at start-up, naming the variable.
 */

const validEnv = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/orders',
  KAFKA_BROKERS: '127.0.0.1:9092',
};
const MAX = 2 ** 31 - 1;

describe("the relay's timer settings", () => {
  it.each([
    'RELAY_DB_TIMEOUT_MS',
    'RELAY_POLL_INTERVAL_MS',
    'RELAY_LEASE_MS',
    'RELAY_RETENTION_INTERVAL_MS',
    'RELAY_CDC_CONFIRM_INTERVAL_MS',
  ])('refuse %s above 2^31 − 1 ms and take it at the limit', (variable) => {
    let error: unknown;
    try {
      loadConfig('relay', configSchema, { ...validEnv, [variable]: String(MAX + 1) });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(variable);
    expect((error as ConfigError).message).toContain('2147483647');
    const ok = loadConfig('relay', configSchema, { ...validEnv, [variable]: String(MAX) });
    expect(ok[variable as keyof typeof ok]).toBe(MAX);
  });
});
