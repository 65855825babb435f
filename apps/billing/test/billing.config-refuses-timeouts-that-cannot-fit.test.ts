// A provider call that may outlast the transaction it can run in, or a statement that may outlast
// its transaction, would turn every slow call into a transaction timeout: refused at startup.
import { loadConfig } from '@outbox/runtime/config';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../src/config.ts';

const env = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/billing', KAFKA_BROKERS: '127.0.0.1:9092' };

describe('billing timeouts configuration', () => {
  it('has defaults that fit in each other', () => {
    expect(loadConfig('billing', configSchema, env)).toMatchObject({
      PAYMENT_TIMEOUT_MS: 3_000,
      DATABASE_CONNECT_TIMEOUT_MS: 5_000,
      DATABASE_STATEMENT_TIMEOUT_MS: 5_000,
      DATABASE_TRANSACTION_TIMEOUT_MS: 10_000,
    });
  });

  it('refuses a provider timeout not shorter than the transaction timeout, naming the variable', () => {
    expect(() => loadConfig('billing', configSchema, { ...env, PAYMENT_TIMEOUT_MS: '10000' })).toThrow(
      /PAYMENT_TIMEOUT_MS: must be shorter than DATABASE_TRANSACTION_TIMEOUT_MS/,
    );
  });

  it('refuses a statement timeout not shorter than the transaction timeout, naming the variable', () => {
    expect(() =>
      loadConfig('billing', configSchema, {
        ...env,
        DATABASE_STATEMENT_TIMEOUT_MS: '20000',
        PAYMENT_TIMEOUT_MS: '1000',
      }),
    ).toThrow(/DATABASE_STATEMENT_TIMEOUT_MS: must be shorter than DATABASE_TRANSACTION_TIMEOUT_MS/);
  });
});
