// `npm run load` after `./dev demo` with DEMO_POSTGRES_URL set: the load generator must read the
// demo's databases where the demo put them, not on 127.0.0.1:5432 (where it once failed at the end
// with `database "orders" does not exist`).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freePort } from '@outbox/devstack/ports';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCliArgs, UsageError } from '../src/cliArgs.ts';

useLeakGuard();

describe('the database URLs of npm run load', () => {
  it('are the demo databases on DEMO_POSTGRES_URL when it is set, and on 127.0.0.1:5432 when not', () => {
    const server = 'postgresql://demo:s3cret@db.internal:6543';
    expect(parseCliArgs([], { DEMO_POSTGRES_URL: server }).databaseUrls).toEqual({
      orders: `${server}/orders`,
      inventory: `${server}/inventory`,
      billing: `${server}/billing`,
    });
    expect(parseCliArgs([], { DEMO_POSTGRES_URL: `${server}/` }).databaseUrls.orders).toBe(
      `${server}/orders`,
    );
    expect(parseCliArgs([], {}).databaseUrls.orders).toBe('postgresql://postgres@127.0.0.1:5432/orders');
  });

  it('take a flag over DEMO_POSTGRES_URL', () => {
    const config = parseCliArgs(['--orders-db', 'postgresql://elsewhere/o'], {
      DEMO_POSTGRES_URL: 'postgresql://postgres@db.internal:6543',
    });
    expect(config.databaseUrls.orders).toBe('postgresql://elsewhere/o');
    expect(config.databaseUrls.billing).toBe('postgresql://postgres@db.internal:6543/billing');
  });

  it('refuse a DEMO_POSTGRES_URL that is not a URL, naming it', () => {
    expect(() => parseCliArgs([], { DEMO_POSTGRES_URL: 'db.internal:6543' })).toThrow(UsageError);
    expect(() => parseCliArgs([], { DEMO_POSTGRES_URL: 'db.internal:6543' })).toThrow(/DEMO_POSTGRES_URL/);
  });
});

// The CLI as a process, its environment as a user's shell sets it. Its orders API is a stand-in
// that accepts every order: what is under test is where the CLI then looks for them.
describe('npm run load with DEMO_POSTGRES_URL', () => {
  let api: Server;
  let apiUrl: string;
  beforeAll(async () => {
    api = createServer((req, res) => {
      req.resume();
      res.writeHead(req.url === '/healthz' ? 200 : 201, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.url === '/healthz' ? { status: 'ok' } : { id: randomUUID() }));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    api?.closeAllConnections();
    await new Promise((resolve) => api?.close(resolve));
  });

  it("reads the orders on DEMO_POSTGRES_URL's server", async () => {
    // No server listens there, so the connection the CLI makes shows where it went.
    const port = await freePort();
    const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');
    const args = ['--url', apiUrl, '--count', '2', '--rate', '50', '--metrics', 'none', '--wait', '1s'];
    const child = spawn(process.execPath, [cli, ...args], {
      env: { ...process.env, DEMO_POSTGRES_URL: `postgresql://postgres@127.0.0.1:${port}` },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain(`127.0.0.1:${port}`);
  });
});
