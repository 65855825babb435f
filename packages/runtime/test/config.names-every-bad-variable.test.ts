import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConfigError,
  consumerServiceSchema,
  kafkaBrokers,
  loadConfig,
  logLevel,
  port,
  positiveInt,
  postgresUrl,
  topicLayout,
  topicPrefix,
} from '../src/config.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const schema = z.object({
  PORT: port(3001),
  DATABASE_URL: postgresUrl,
  KAFKA_BROKERS: kafkaBrokers,
  KAFKA_TOPIC_PREFIX: topicPrefix,
  BATCH_SIZE: positiveInt(100),
  LOG_LEVEL: logLevel,
  MIGRATE_ON_START: z.stringbool().default(true),
});

const validEnv = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/orders',
  KAFKA_BROKERS: '127.0.0.1:9092',
};

/** The ConfigError `load` throws (fails the test if it throws nothing or something else). */
function configErrorOf(load: () => unknown): ConfigError {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError, but the config loaded');
}

describe('loadConfig', () => {
  it('fills in the defaults of everything not set', () => {
    expect(loadConfig('test', schema, validEnv)).toEqual({
      PORT: 3001,
      DATABASE_URL: validEnv.DATABASE_URL,
      KAFKA_BROKERS: ['127.0.0.1:9092'],
      KAFKA_TOPIC_PREFIX: '',
      BATCH_SIZE: 100,
      LOG_LEVEL: 'info',
      MIGRATE_ON_START: true,
    });
  });

  it('turns strings from the environment into typed values', () => {
    const config = loadConfig('test', schema, {
      ...validEnv,
      PORT: '8080',
      KAFKA_BROKERS: 'kafka-1:9092, kafka-2:9093',
      KAFKA_TOPIC_PREFIX: 'demo.',
      BATCH_SIZE: '25',
      LOG_LEVEL: 'debug',
      MIGRATE_ON_START: 'false',
    });
    expect(config).toEqual({
      PORT: 8080,
      DATABASE_URL: validEnv.DATABASE_URL,
      KAFKA_BROKERS: ['kafka-1:9092', 'kafka-2:9093'],
      KAFKA_TOPIC_PREFIX: 'demo.',
      BATCH_SIZE: 25,
      LOG_LEVEL: 'debug',
      MIGRATE_ON_START: false,
    });
  });

  it('reads process.env when no environment is passed', () => {
    const previous = process.env.TEST_ONLY_CONFIG_VALUE;
    process.env.TEST_ONLY_CONFIG_VALUE = 'from-process-env';
    try {
      expect(loadConfig('test', z.object({ TEST_ONLY_CONFIG_VALUE: z.string() }))).toEqual({
        TEST_ONLY_CONFIG_VALUE: 'from-process-env',
      });
    } finally {
      if (previous === undefined) delete process.env.TEST_ONLY_CONFIG_VALUE;
      else process.env.TEST_ONLY_CONFIG_VALUE = previous;
    }
  });

  it('names every bad variable in one ConfigError: a missing DATABASE_URL and malformed KAFKA_BROKERS', () => {
    const error = configErrorOf(() => loadConfig('relay', schema, { KAFKA_BROKERS: 'not a broker list' }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.name).toBe('ConfigError');
    expect(error.message).toMatch(/^relay: invalid configuration/);
    expect(error.message).toContain('DATABASE_URL');
    expect(error.message).toContain('KAFKA_BROKERS');
    expect(error.issues.find((line) => line.startsWith('DATABASE_URL:'))).toContain('(it is not set)');
    expect(error.issues.some((line) => line.startsWith('KAFKA_BROKERS'))).toBe(true);
  });

  it.each([
    ['DATABASE_URL', 'mysql://root@localhost/orders'],
    ['DATABASE_URL', 'postgresql://postgres@127.0.0.1:5432'],
    ['KAFKA_BROKERS', ''],
    ['KAFKA_BROKERS', '127.0.0.1'],
    ['KAFKA_BROKERS', '127.0.0.1:9092,'],
    ['PORT', '70000'],
    ['PORT', 'eighty'],
    ['BATCH_SIZE', '0'],
    ['LOG_LEVEL', 'verbose'],
    ['KAFKA_TOPIC_PREFIX', 'a/b'],
    ['MIGRATE_ON_START', 'maybe'],
  ])('refuses %s=%j and names the variable', (variable, value) => {
    const error = configErrorOf(() => loadConfig('test', schema, { ...validEnv, [variable]: value }));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatch(new RegExp(`^${variable}\\b`));
  });

  // The message goes to the logs, and a refused value may be a secret (a token, a URL with a password).
  it.each([
    ['DATABASE_URL', 'mysql://orders:s3cret-password@db.internal/orders'],
    ['DATABASE_URL', 'postgresql://orders:s3cret-password@db.internal:5432'],
    ['KAFKA_BROKERS', 's3cret-password'],
    ['PORT', 's3cret-password'],
    ['LOG_LEVEL', 's3cret-password'],
    ['MIGRATE_ON_START', 's3cret-password'],
    ['KAFKA_TOPIC_PREFIX', 's3cret/password'],
  ])('names %s and the reason but never prints the value it refused (%j)', (variable, value) => {
    const error = configErrorOf(() => loadConfig('test', schema, { ...validEnv, [variable]: value }));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatch(new RegExp(`^${variable}: \\S`));
    expect(error.message).not.toContain('s3cret');
    expect(error.message).not.toContain('password');
  });

  it('gives the consumer services their own port and group defaults', () => {
    const config = loadConfig('billing', consumerServiceSchema({ port: 3004, groupId: 'billing' }), validEnv);
    expect(config).toMatchObject({ PORT: 3004, KAFKA_GROUP_ID: 'billing', KAFKA_TOPIC_PARTITIONS: 6 });
  });

  it('creates topics with one replica unless KAFKA_REPLICATION_FACTOR says how many (a cluster: 3)', () => {
    const schema = consumerServiceSchema({ port: 3004, groupId: 'billing' });
    expect(topicLayout(loadConfig('billing', schema, validEnv))).toEqual({
      partitions: 6,
      replicationFactor: 1,
    });
    const onACluster = loadConfig('billing', schema, { ...validEnv, KAFKA_REPLICATION_FACTOR: '3' });
    expect(topicLayout(onACluster)).toEqual({ partitions: 6, replicationFactor: 3 });
    const error = configErrorOf(() =>
      loadConfig('billing', schema, { ...validEnv, KAFKA_REPLICATION_FACTOR: '0' }),
    );
    expect(error.issues[0]).toMatch(/^KAFKA_REPLICATION_FACTOR: /);
  });

  it("keeps a consumer's session timeout at kafkajs' 30 s unless set, and refuses one shorter than three heartbeats", () => {
    const schema = consumerServiceSchema({ port: 3004, groupId: 'billing' });
    expect(loadConfig('billing', schema, validEnv).KAFKA_SESSION_TIMEOUT_MS).toBe(30_000);
    const shorter = loadConfig('billing', schema, { ...validEnv, KAFKA_SESSION_TIMEOUT_MS: '10000' });
    expect(shorter.KAFKA_SESSION_TIMEOUT_MS).toBe(10_000);
    const error = configErrorOf(() =>
      loadConfig('billing', schema, { ...validEnv, KAFKA_SESSION_TIMEOUT_MS: '3000' }),
    );
    expect(error.issues).toEqual(['KAFKA_SESSION_TIMEOUT_MS: at least 9000 ms']);
  });
});

/** Run a service's main.ts with nothing in its environment but PATH (plus `env`). */
function runMain(
  app: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`apps/${app}/src/main.ts`], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the standby settings (DATABASE_WAIT_FOR_STANDBY)', () => {
  const consumer = consumerServiceSchema({ port: 3003, groupId: 'inventory' });

  it('are off unless set, and take `any` or a standby name', () => {
    expect(loadConfig('inventory', consumer, validEnv)).toMatchObject({ DATABASE_STANDBY_WAIT_MS: 5000 });
    expect(loadConfig('inventory', consumer, validEnv).DATABASE_WAIT_FOR_STANDBY).toBeUndefined();
    const named = { ...validEnv, DATABASE_WAIT_FOR_STANDBY: 'standby-1' };
    expect(loadConfig('inventory', consumer, named).DATABASE_WAIT_FOR_STANDBY).toBe('standby-1');
  });

  it('name a standby that could never match an application_name', () => {
    const error = configErrorOf(() =>
      loadConfig('inventory', consumer, { ...validEnv, DATABASE_WAIT_FOR_STANDBY: "x'; drop" }),
    );
    expect(error.message).toMatch(/DATABASE_WAIT_FOR_STANDBY/);
  });
});

describe('a service started with a bad environment', () => {
  it('orders exits with EX_CONFIG (78) and names DATABASE_URL when it is unset', async () => {
    const result = await runMain('orders', {});
    expect(result.code, result.stderr).toBe(78);
    expect(result.stderr).toContain('orders: invalid configuration');
    expect(result.stderr).toMatch(/DATABASE_URL: .*\(it is not set\)/);
    // Plainly, without a stack trace.
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('relay exits with EX_CONFIG (78) and names KAFKA_BROKERS when it is not a broker list', async () => {
    const result = await runMain('relay', {
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/unused',
      KAFKA_BROKERS: 'not a broker list',
    });
    expect(result.code, result.stderr).toBe(78);
    expect(result.stderr).toContain('relay: invalid configuration');
    expect(result.stderr).toMatch(/^ {2}- KAFKA_BROKERS\b/m);
    expect(result.stderr).not.toContain('DATABASE_URL');
  });
});
