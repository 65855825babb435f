// The chaos suite's fault points, the naive write modes and the broken dedup build exist in the
// same code that runs in production, so none may be switched on there by accident: each app's
// config refuses every one of them, naming the variable, unless OUTBOX_ALLOW_FAULTS=test or demo
// says the process is a test or the local demo. Default deny: NODE_ENV does not decide it.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { configSchema as billingConfig } from '@outbox/billing/config';
import { configSchema as inventoryConfig } from '@outbox/inventory/config';
import { configSchema as ordersConfig } from '@outbox/orders/config';
import { configSchema as relayConfig } from '@outbox/relay/config';
import { loadConfig } from '@outbox/runtime/config';
import { describe, expect, it } from 'vitest';

const base = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/orders', KAFKA_BROKERS: '127.0.0.1:9092' };
const REFUSED = 'is a test or demo switch and is refused unless OUTBOX_ALLOW_FAULTS=test or demo';
/** Without the allow switch, whatever NODE_ENV says (unset, as a developer's shell has it, too). */
const NODE_ENVS = [undefined, 'development', 'test', 'staging', 'production'];

type Schema = Parameters<typeof loadConfig>[1];
const SWITCHES: [service: string, variable: string, value: string, schema: Schema][] = [
  ['relay', 'RELAY_FAULT', 'crash-after-publish', relayConfig],
  ['relay', 'RELAY_FAULT', 'crash-with-pipelined-batch:3', relayConfig],
  ['orders', 'WRITE_MODE', 'commit-then-publish', ordersConfig],
  ['orders', 'WRITE_MODE', 'publish-then-commit', ordersConfig],
  ['orders', 'FAULT_KILL_BETWEEN_WRITES_AT', '45', ordersConfig],
  ['orders', 'FAULT_FAIL_COMMIT_EVERY', '10', ordersConfig],
  ['orders', 'INBOX_DEDUP', 'off', ordersConfig],
  ['billing', 'PAYMENT_FAULT_RATE', '0.5', billingConfig],
  ['billing', 'PAYMENT_LATENCY_MS', '6000', billingConfig],
  ...(['orders', 'inventory', 'billing'] as const).flatMap((service) => {
    const schema = { orders: ordersConfig, inventory: inventoryConfig, billing: billingConfig }[service];
    return [
      [service, 'FAULT_KILL_AFTER_COMMIT', 'true', schema],
      [service, 'FAULT_KILL_MID_CHUNK', 'true', schema],
    ] as [string, string, string, Schema][];
  }),
];

function withNodeEnv(env: Record<string, string>, nodeEnv: string | undefined): Record<string, string> {
  return nodeEnv === undefined ? env : { ...env, NODE_ENV: nodeEnv };
}

describe('test and demo switches', () => {
  it.each(SWITCHES)(
    '%s refuses %s=%s without OUTBOX_ALLOW_FAULTS, whatever NODE_ENV',
    (service, name, value, schema) => {
      for (const nodeEnv of NODE_ENVS) {
        expect(
          () => loadConfig(service, schema, withNodeEnv({ ...base, [name]: value }, nodeEnv)),
          String(nodeEnv),
        ).toThrow(new RegExp(`${name}: ${REFUSED}`));
      }
    },
  );

  it.each(SWITCHES)(
    '%s takes %s=%s with OUTBOX_ALLOW_FAULTS=test or demo',
    (service, name, value, schema) => {
      for (const allow of ['test', 'demo']) {
        const config = loadConfig(service, schema, {
          ...base,
          OUTBOX_ALLOW_FAULTS: allow,
          [name]: value,
        }) as Record<string, unknown>;
        expect(config[name]).toBeDefined();
      }
    },
  );

  it.each([
    ['relay', relayConfig],
    ['orders', ordersConfig],
    ['inventory', inventoryConfig],
    ['billing', billingConfig],
  ] as const)(
    '%s refuses OUTBOX_ALLOW_FAULTS itself when NODE_ENV=production, and any other value',
    (service, schema) => {
      expect(() =>
        loadConfig(service, schema, { ...base, NODE_ENV: 'production', OUTBOX_ALLOW_FAULTS: 'test' }),
      ).toThrow(/OUTBOX_ALLOW_FAULTS: allows test and demo switches and is refused when NODE_ENV=production/);
      expect(() => loadConfig(service, schema, { ...base, OUTBOX_ALLOW_FAULTS: 'yes' })).toThrow(
        /OUTBOX_ALLOW_FAULTS: expected demo or test/,
      );
    },
  );

  it('leaves every switch off by default, as production runs', () => {
    for (const nodeEnv of NODE_ENVS) {
      const orders = loadConfig('orders', ordersConfig, withNodeEnv(base, nodeEnv));
      expect(orders).toMatchObject({
        WRITE_MODE: 'outbox',
        WRITE_MODES_SWITCHABLE: false,
        FAULT_KILL_BETWEEN_WRITES_AT: 0,
        FAULT_FAIL_COMMIT_EVERY: 0,
        FAULT_KILL_AFTER_COMMIT: false,
        FAULT_KILL_MID_CHUNK: false,
        INBOX_DEDUP: 'on',
      });
      expect(loadConfig('relay', relayConfig, withNodeEnv(base, nodeEnv)).RELAY_FAULT).toBeUndefined();
      for (const [service, schema] of [
        ['inventory', inventoryConfig],
        ['billing', billingConfig],
      ] as const) {
        expect(loadConfig(service, schema, withNodeEnv(base, nodeEnv))).toMatchObject({
          FAULT_KILL_AFTER_COMMIT: false,
          FAULT_KILL_MID_CHUNK: false,
        });
      }
      expect(loadConfig('billing', billingConfig, withNodeEnv(base, nodeEnv))).toMatchObject({
        PAYMENT_FAULT_RATE: 0,
        PAYMENT_LATENCY_MS: 0,
      });
    }
  });

  it('orders refuses the demo write-mode switch without its allow switch, and without its token', () => {
    const switchable = { ...base, WRITE_MODES_SWITCHABLE: 'true', ORDERS_ADMIN_TOKEN: 'a'.repeat(16) };
    expect(() => loadConfig('orders', ordersConfig, switchable)).toThrow(
      new RegExp(`WRITE_MODES_SWITCHABLE: ${REFUSED}`),
    );
    expect(
      loadConfig('orders', ordersConfig, { ...switchable, OUTBOX_ALLOW_FAULTS: 'demo' })
        .WRITE_MODES_SWITCHABLE,
    ).toBe(true);
    expect(() =>
      loadConfig('orders', ordersConfig, {
        ...base,
        OUTBOX_ALLOW_FAULTS: 'demo',
        WRITE_MODES_SWITCHABLE: 'true',
      }),
    ).toThrow(/ORDERS_ADMIN_TOKEN: is required with WRITE_MODES_SWITCHABLE=true/);
  });

  it('parses RELAY_FAULT=crash-after-publish[:n] and crash-with-pipelined-batch[:n] when allowed', () => {
    const fault = (value: string) =>
      loadConfig('relay', relayConfig, { ...base, OUTBOX_ALLOW_FAULTS: 'test', RELAY_FAULT: value })
        .RELAY_FAULT;
    expect(fault('crash-after-publish')).toEqual({ crashAfterPublish: 1 });
    expect(fault('crash-after-publish:3')).toEqual({ crashAfterPublish: 3 });
    expect(fault('crash-with-pipelined-batch')).toEqual({ crashWithPipelinedBatch: 1 });
    expect(fault('crash-with-pipelined-batch:3')).toEqual({ crashWithPipelinedBatch: 3 });
    expect(() => fault('crash')).toThrow(/RELAY_FAULT: expected crash-after-publish/);
    expect(() => fault('crash-with-pipelined-batch:0')).toThrow(/RELAY_FAULT: expected/);
  });

  it('a relay started with RELAY_FAULT and no allow switch exits with EX_CONFIG (78) naming it', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['apps/relay/src/main.ts'],
        {
          cwd: root,
          env: { PATH: process.env.PATH ?? '', ...base, RELAY_FAULT: 'crash-after-publish' },
          timeout: 60_000,
        },
        (err, _stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stderr }),
      );
    });
    expect(code, stderr).toBe(78);
    expect(stderr).toContain(`RELAY_FAULT: ${REFUSED}`);
  }, 90_000); // a Node start on a busy 2-core machine; the process itself exits at its config
});
