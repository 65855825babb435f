import { ConfigError, loadConfig } from '@outbox/runtime/config';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../src/config.ts';

/**
 * Orders's timers (packages/runtime/test/config.refuses-timers-longer-than-node-can-wait.test.ts
 * says why): a value Node cannot wait is refused at start-up, naming the variable.
 */

const validEnv = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/orders',
  KAFKA_BROKERS: '127.0.0.1:9092',
};

describe("orders's timer settings", () => {
  it.each(['SAGA_TIMEOUT_MS', 'SAGA_SWEEP_INTERVAL_MS', 'KAFKA_COMMIT_INTERVAL_MS'])(
    'refuse %s above 2^31 − 1 ms',
    (variable) => {
      let error: unknown;
      try {
        loadConfig('orders', configSchema, { ...validEnv, [variable]: String(2 ** 31) });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toContain(variable);
      expect((error as ConfigError).message).toContain('2147483647');
    },
  );
});
