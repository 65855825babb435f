// DNS rebinding: a page on another site whose name resolves to 127.0.0.1 reads the console
// through the visitor's browser. The console answers only to its own loopback name and port.
import { request } from 'node:http';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createLogger } from '@outbox/runtime/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../src/console.ts';
import { bareConsoleConfig } from './bareConsole.ts';

useLeakGuard();

let consoleApp: RunningConsole;
let port: number;

beforeAll(async () => {
  const config = await bareConsoleConfig('console-host-test.', { CONSOLE_HOSTS: 'console.internal:8080' });
  consoleApp = await startConsole({ config, logger: createLogger('console', 'silent') });
  port = Number(new URL(consoleApp.url).port);
});

afterAll(async () => {
  await consoleApp?.close();
});

/** fetch() does not let a caller set Host; node:http does, as a rebinding browser effectively would. */
function get(path: string, host: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the console and the Host header', () => {
  it('refuses a foreign name, another port or no port with 403 problem+json, on the API and the page', async () => {
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      `127.0.0.1:${port + 1}`,
      '127.0.0.1',
      `10.0.0.5:${port}`,
    ]) {
      for (const path of ['/api/orders', '/api/info', '/']) {
        const answer = await get(path, host);
        expect({ host, path, status: answer.status }).toEqual({ host, path, status: 403 });
        expect(answer.type).toContain('application/problem+json');
        expect(JSON.parse(answer.body)).toMatchObject({ status: 403, title: 'Unknown host' });
      }
    }
  });

  it('answers its own loopback names and port, and the names CONSOLE_HOSTS adds', async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `[::1]:${port}`,
      'console.internal:8080',
    ]) {
      const answer = await get('/api/orders', host);
      expect({ host, status: answer.status }).toEqual({ host, status: 200 });
    }
  });

  it('answers /healthz under any name (container health checks)', async () => {
    expect((await get('/healthz', 'console:8080')).status).toBe(200);
  });
});
