// The admission limit is sized from the connection pool once, at startup (src/config.ts): by
// default the pool less the 2 connections kept for /healthz and background work, and a limit that
// would leave fewer free is refused, naming the variable.
import { loadConfig } from '@outbox/runtime/config';
import { describe, expect, it } from 'vitest';
import { admissionOptions, configSchema } from '../src/config.ts';

const env = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/orders', KAFKA_BROKERS: '127.0.0.1:9092' };

describe('orders config: the admission limit', () => {
  it('is adaptive by default, up to the pool less 2, queueing only short expected waits', () => {
    expect(admissionOptions(loadConfig('orders', configSchema, env))).toEqual({
      limit: 20,
      queueLength: 256,
      queueTimeoutMs: 500,
      retryAfterSeconds: 1,
      // The cuts may at most halve the limit.
      adaptive: { minLimit: 10, expectedWaitMs: 250, sagaBacklogMs: 1_000 },
    });
    expect(
      admissionOptions(loadConfig('orders', configSchema, { ...env, DATABASE_POOL_SIZE: '20' })),
    ).toMatchObject({ limit: 18, adaptive: { minLimit: 9 } });
  });

  it('as fixed, is the pool less 2 with a short queue and Retry-After 1 s', () => {
    expect(
      admissionOptions(loadConfig('orders', configSchema, { ...env, ADMISSION_LIMITER: 'fixed' })),
    ).toEqual({
      limit: 20,
      queueLength: 16,
      queueTimeoutMs: 25,
      retryAfterSeconds: 1,
    });
    expect(
      admissionOptions(
        loadConfig('orders', configSchema, { ...env, ADMISSION_LIMITER: 'fixed', ADMISSION_LIMIT: '1' }),
      ),
    ).toMatchObject({ limit: 1 });
    expect(
      admissionOptions(loadConfig('orders', configSchema, { ...env, ADMISSION_LIMIT: '1' })).adaptive,
    ).toMatchObject({
      minLimit: 1,
    });
    expect(() => loadConfig('orders', configSchema, { ...env, ADMISSION_LIMITER: 'gradient' })).toThrow(
      /ADMISSION_LIMITER/,
    );
    expect(() =>
      loadConfig('orders', configSchema, { ...env, ADMISSION_LIMIT: '4', ADMISSION_MIN_LIMIT: '5' }),
    ).toThrow(/ADMISSION_MIN_LIMIT: must not be above ADMISSION_LIMIT/);
  });

  it('takes a limit that leaves 2 connections of the pool free, and refuses one that does not', () => {
    const config = loadConfig('orders', configSchema, {
      ...env,
      DATABASE_POOL_SIZE: '6',
      ADMISSION_LIMIT: '4',
    });
    expect(admissionOptions(config).limit).toBe(4);
    expect(() =>
      loadConfig('orders', configSchema, { ...env, DATABASE_POOL_SIZE: '6', ADMISSION_LIMIT: '5' }),
    ).toThrow(/ADMISSION_LIMIT: must leave 2 connections of DATABASE_POOL_SIZE free/);
    expect(() => loadConfig('orders', configSchema, { ...env, DATABASE_POOL_SIZE: '2' })).toThrow(
      /DATABASE_POOL_SIZE/,
    );
    expect(() => loadConfig('orders', configSchema, { ...env, ADMISSION_QUEUE_TIMEOUT_MS: '5000' })).toThrow(
      /ADMISSION_QUEUE_TIMEOUT_MS/,
    );
  });
});
