// The chaos suite's fault points exist in the same code that runs in production, so each one must
// be impossible to switch on there: the app's config refuses it, naming the variable.
import { loadConfig } from '@outbox/runtime/config';
import { describe, expect, it } from 'vitest';
import { configSchema as billingConfig } from '../../apps/billing/src/config.ts';
import { configSchema as inventoryConfig } from '../../apps/inventory/src/config.ts';
import { configSchema as ordersConfig } from '../../apps/orders/src/config.ts';
import { configSchema as relayConfig } from '../../apps/relay/src/config.ts';

const base = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/orders', KAFKA_BROKERS: '127.0.0.1:9092' };

describe('test-only fault points', () => {
  it('the relay takes RELAY_FAULT=crash-after-publish[:n] in tests', () => {
    expect(
      loadConfig('relay', relayConfig, { ...base, RELAY_FAULT: 'crash-after-publish' }).RELAY_FAULT,
    ).toEqual({
      crashAfterPublish: 1,
    });
    expect(
      loadConfig('relay', relayConfig, { ...base, RELAY_FAULT: 'crash-after-publish:3' }).RELAY_FAULT,
    ).toEqual({
      crashAfterPublish: 3,
    });
    expect(() => loadConfig('relay', relayConfig, { ...base, RELAY_FAULT: 'crash' })).toThrow(
      /RELAY_FAULT: expected crash-after-publish/,
    );
  });

  it('the relay takes RELAY_FAULT=crash-with-pipelined-batch[:n] in tests', () => {
    const fault = (value: string) =>
      loadConfig('relay', relayConfig, { ...base, RELAY_FAULT: value }).RELAY_FAULT;
    expect(fault('crash-with-pipelined-batch')).toEqual({ crashWithPipelinedBatch: 1 });
    expect(fault('crash-with-pipelined-batch:3')).toEqual({ crashWithPipelinedBatch: 3 });
    expect(() => fault('crash-with-pipelined-batch:0')).toThrow(/RELAY_FAULT: expected/);
  });

  it('the relay refuses RELAY_FAULT when NODE_ENV=production', () => {
    expect(() =>
      loadConfig('relay', relayConfig, {
        ...base,
        NODE_ENV: 'production',
        RELAY_FAULT: 'crash-after-publish',
      }),
    ).toThrow(/RELAY_FAULT: is a test-only fault point and is refused when NODE_ENV=production/);
    expect(() =>
      loadConfig('relay', relayConfig, {
        ...base,
        NODE_ENV: 'production',
        RELAY_FAULT: 'crash-with-pipelined-batch',
      }),
    ).toThrow(/RELAY_FAULT: is a test-only fault point and is refused when NODE_ENV=production/);
    expect(loadConfig('relay', relayConfig, { ...base, NODE_ENV: 'production' }).RELAY_FAULT).toBeUndefined();
  });

  it('orders refuses INBOX_DEDUP=off when NODE_ENV=production, and dedups by default', () => {
    expect(loadConfig('orders', ordersConfig, base).INBOX_DEDUP).toBe('on');
    expect(loadConfig('orders', ordersConfig, { ...base, INBOX_DEDUP: 'off' }).INBOX_DEDUP).toBe('off');
    expect(() =>
      loadConfig('orders', ordersConfig, { ...base, NODE_ENV: 'production', INBOX_DEDUP: 'off' }),
    ).toThrow(/INBOX_DEDUP: off is a test-only broken build and is refused when NODE_ENV=production/);
  });

  it('orders writes through the outbox by default and refuses the naive write modes when NODE_ENV=production', () => {
    expect(loadConfig('orders', ordersConfig, base).WRITE_MODE).toBe('outbox');
    expect(loadConfig('orders', ordersConfig, { ...base, NODE_ENV: 'production' }).WRITE_MODE).toBe('outbox');
    for (const mode of ['commit-then-publish', 'publish-then-commit']) {
      expect(loadConfig('orders', ordersConfig, { ...base, WRITE_MODE: mode }).WRITE_MODE).toBe(mode);
      expect(() =>
        loadConfig('orders', ordersConfig, { ...base, NODE_ENV: 'production', WRITE_MODE: mode }),
      ).toThrow(/WRITE_MODE: is a naive dual write kept for the demo and the chaos suite and is refused/);
    }
    const switchable = { ...base, WRITE_MODES_SWITCHABLE: 'true', ORDERS_ADMIN_TOKEN: 'a'.repeat(16) };
    expect(loadConfig('orders', ordersConfig, switchable).WRITE_MODES_SWITCHABLE).toBe(true);
    expect(() => loadConfig('orders', ordersConfig, { ...switchable, NODE_ENV: 'production' })).toThrow(
      /WRITE_MODES_SWITCHABLE: lets the demo switch to a naive dual write and is refused/,
    );
    expect(() => loadConfig('orders', ordersConfig, { ...base, WRITE_MODES_SWITCHABLE: 'true' })).toThrow(
      /ORDERS_ADMIN_TOKEN: is required with WRITE_MODES_SWITCHABLE=true/,
    );
  });

  it.each([
    ['FAULT_KILL_BETWEEN_WRITES_AT', '45', 45],
    ['FAULT_FAIL_COMMIT_EVERY', '10', 10],
  ] as const)('orders takes %s in tests and refuses it when NODE_ENV=production', (name, value, parsed) => {
    expect(loadConfig('orders', ordersConfig, { ...base, [name]: value })[name]).toBe(parsed);
    expect(() =>
      loadConfig('orders', ordersConfig, { ...base, NODE_ENV: 'production', [name]: value }),
    ).toThrow(new RegExp(`${name}: is a test-only fault point and is refused when NODE_ENV=production`));
  });

  const services = [
    ['orders', ordersConfig],
    ['inventory', inventoryConfig],
    ['billing', billingConfig],
  ] as const;
  it.each(
    services.flatMap(([service, schema]) =>
      (['FAULT_KILL_AFTER_COMMIT', 'FAULT_KILL_MID_CHUNK'] as const).map(
        (name) => [service, name, schema] as const,
      ),
    ),
  )('%s takes %s in tests and refuses it when NODE_ENV=production', (service, name, schema) => {
    expect(loadConfig(service, schema, { ...base, [name]: 'true' })[name]).toBe(true);
    expect(() => loadConfig(service, schema, { ...base, NODE_ENV: 'production', [name]: 'true' })).toThrow(
      new RegExp(`${name}: is a test-only fault point and is refused when NODE_ENV=production`),
    );
    expect(loadConfig(service, schema, { ...base, NODE_ENV: 'production' })[name]).toBe(false);
  });
});
