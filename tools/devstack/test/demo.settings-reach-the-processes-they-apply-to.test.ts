// The demo passes the caller's settings on to the processes whose config takes them, says in its
// banner what went where, and gives one line to each it does not pass on. Before, every process got
// only PATH, LOG_LEVEL and the demo's plan: DATABASE_WAIT_FOR_STANDBY=any ./dev demo ran unguarded.
// (The demo as a process, with a setting reaching a service's environment, is checked in
// demo.fresh-machine-embedded-postgres-and-closed-pipe.test.ts.)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describePassOn, passOn } from '../../../scripts/demo/passOn.ts';
import { demoPassOnRules, environmentWithFile } from '../../../scripts/demo/passOnRules.ts';
import { repoRoot } from '../src/paths.ts';

const polling = { orders: 'polling', inventory: 'polling', billing: 'polling' } as const;
const RELAYS = ['relay-orders', 'relay-inventory', 'relay-billing'];

describe("the demo's settings for its processes", () => {
  it('passes DATABASE_WAIT_FOR_STANDBY to the three services and the three relays, not to the console', () => {
    const result = passOn({ DATABASE_WAIT_FOR_STANDBY: 'any', PATH: '/usr/bin' }, demoPassOnRules(polling));
    for (const name of ['orders', 'inventory', 'billing', ...RELAYS]) {
      expect(result.env[name]).toEqual({ DATABASE_WAIT_FOR_STANDBY: 'any' });
    }
    expect(result.env.console).toBeUndefined();
    expect(result.notes).toEqual([]); // PATH is no business of the demo's
    expect(describePassOn(result)).toEqual([
      'DATABASE_WAIT_FOR_STANDBY=any → orders, inventory, billing, the relays',
    ]);
  });

  it("gives each setting to its app only: the relay's batch size to the relays, the saga timeout to orders", () => {
    const { env } = passOn({ RELAY_BATCH_SIZE: '200', SAGA_TIMEOUT_MS: '60000' }, demoPassOnRules(polling));
    expect(Object.keys(env).sort()).toEqual(['orders', ...RELAYS].sort());
    expect(env.orders).toEqual({ SAGA_TIMEOUT_MS: '60000' });
    expect(env['relay-billing']).toEqual({ RELAY_BATCH_SIZE: '200' });
  });

  it('keeps the standby wait from a debezium relay, which refuses it', () => {
    const { env } = passOn(
      { DATABASE_WAIT_FOR_STANDBY: 'any' },
      demoPassOnRules({ ...polling, orders: 'debezium' }),
    );
    expect(env['relay-orders']).toBeUndefined();
    expect(env['relay-inventory']).toEqual({ DATABASE_WAIT_FOR_STANDBY: 'any' });
  });

  it('names in one line each a setting the demo makes itself and an unknown one, with the likely typo', () => {
    const { env, notes } = passOn(
      {
        DATABASE_URL: 'postgresql://elsewhere/orders',
        DATABASE_WAIT_FOR_STANBY: 'any',
        KAFKA_PORT: '19092', // the demo's own: it uses it, nothing to say
      },
      demoPassOnRules(polling),
    );
    expect(env).toEqual({});
    expect(notes).toEqual([
      "DATABASE_URL is not passed on: the demo's processes use their service's database on DEMO_POSTGRES_URL",
      "DATABASE_WAIT_FOR_STANBY is no setting of any of the demo's processes: not passed on (did you mean DATABASE_WAIT_FOR_STANDBY?)",
    ]);
  });

  it('prints no secret: a password or a token shows as set', () => {
    const result = passOn(
      { KAFKA_SASL_PASSWORD: 'hunter2', CONSOLE_READ_TOKEN: 'r'.repeat(24) },
      demoPassOnRules(polling),
    );
    expect(result.env.console?.CONSOLE_READ_TOKEN).toBe('r'.repeat(24));
    expect(describePassOn(result).join('\n')).not.toMatch(/hunter2|rrrr/);
  });

  it("passes on or names every variable of the README's configuration table", () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Requirements'));
    const variables = table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) =>
        [...(line.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1] ?? ''),
      );
    expect(variables.length).toBeGreaterThan(50);
    const rules = demoPassOnRules(polling);
    const silent = variables.filter((variable) => {
      const { passed, notes } = passOn({ [variable]: 'x' }, rules);
      return passed.length === 0 && notes.length === 0 && !rules.ownVariables.includes(variable);
    });
    expect(silent).toEqual([]);
  });

  it('reads --env FILE under the environment: a variable set in both keeps the environment’s value', () => {
    const dir = mkdtempSync(join(tmpdir(), 'demo-env-'));
    try {
      const file = join(dir, 'production.env');
      writeFileSync(file, '# as production.md asks\nDATABASE_WAIT_FOR_STANDBY=any\nRELAY_BATCH_SIZE=500\n');
      const env = environmentWithFile({ RELAY_BATCH_SIZE: '200' }, ['--env', file]);
      expect(env).toEqual({ DATABASE_WAIT_FOR_STANDBY: 'any', RELAY_BATCH_SIZE: '200' });
      expect(() => environmentWithFile({}, ['--env', join(dir, 'missing.env')])).toThrow(
        /--env .*missing\.env/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
