import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, consumerServiceSchema, loadConfig } from '../src/config.ts';
import { databaseTimeoutSettings } from '../src/databaseTimeouts.ts';

/**
 * Node's setTimeout and setInterval take at most 2^31 − 1 ms (about 24.8 days) and fire a longer
 * delay after 1 ms, so a poll interval of 30 days would poll every millisecond. Every timer setting
 * refuses such a value at start-up and names the variable. (The apps' own timers: their tests, e.g.
 * apps/relay/test/config.refuses-timers-longer-than-node-can-wait.test.ts.)
 */

const schema = consumerServiceSchema({ port: 3003, groupId: 'inventory' }).extend(databaseTimeoutSettings);
const validEnv = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/inventory',
  KAFKA_BROKERS: '127.0.0.1:9092',
};
const MAX = 2 ** 31 - 1;

describe('the shared timer settings', () => {
  it.each([
    'KAFKA_COMMIT_INTERVAL_MS',
    'DATABASE_CONNECT_TIMEOUT_MS',
    'DATABASE_STATEMENT_TIMEOUT_MS',
    'DATABASE_TRANSACTION_TIMEOUT_MS',
  ])('refuse %s above 2^31 − 1 ms and take it at the limit', (variable) => {
    let error: unknown;
    try {
      loadConfig('inventory', schema, { ...validEnv, [variable]: String(MAX + 1) });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(variable);
    expect((error as ConfigError).message).toContain('2147483647');
    const ok = loadConfig('inventory', z.object(schema.shape), { ...validEnv, [variable]: String(MAX) });
    expect(ok[variable as keyof typeof ok]).toBe(MAX);
  });
});
