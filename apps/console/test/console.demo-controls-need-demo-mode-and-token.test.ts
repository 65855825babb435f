import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createLogger } from '@outbox/runtime/logger';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../src/console.ts';
import type { DemoControls, ProcessControl } from '../src/demoControlRoutes.ts';
import { bareConsoleConfig } from './bareConsole.ts';
import { launchBrowser, screenshot } from './browser.ts';

useLeakGuard();

const TOKEN = 'demo-controls-test-token-0123';
const calls: string[] = [];

function recordingControl(name: string): ProcessControl {
  let running = true;
  return {
    isRunning: () => running,
    stop: async () => {
      calls.push(`${name}/stop`);
      running = false;
    },
    kill: async () => {
      calls.push(`${name}/kill`);
      running = false;
    },
    start: async () => {
      calls.push(`${name}/start`);
      running = true;
    },
  };
}

const controls: DemoControls = {
  brokers: { broker: recordingControl('broker') },
  services: { inventory: recordingControl('inventory'), 'relay-orders': recordingControl('relay-orders') },
};

/** A console whose services are all away (nothing listens, the databases do not exist). */
async function startBareConsole(withControls: boolean): Promise<RunningConsole> {
  const config = await bareConsoleConfig('console-controls-test.', {
    CONSOLE_ADMIN_TOKEN: TOKEN,
    RELAY_ADMIN_TOKEN: 'relay-token-0123456789',
  });
  return startConsole({
    config,
    logger: createLogger('console', 'silent'),
    ...(withControls ? { controls } : {}),
  });
}

let plain: RunningConsole;
let demo: RunningConsole;
let browser: Browser;

beforeAll(async () => {
  [plain, demo] = await Promise.all([startBareConsole(false), startBareConsole(true)]);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await plain?.close();
  await demo?.close();
});

const post = (base: RunningConsole, path: string, token?: string) =>
  fetch(`${base.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: '{}',
  });

describe('demo controls', () => {
  it('do not exist without demo mode: 404, even with the token, and no buttons on the page', async () => {
    expect((await fetch(`${plain.url}/api/demo`)).status).toBe(404);
    const kill = await post(plain, '/api/demo/broker/kill', TOKEN);
    expect(kill.status).toBe(404);
    expect(kill.headers.get('content-type')).toContain('application/problem+json');
    expect(calls).toEqual([]);

    const page = await browser.newPage();
    await page.goto(`${plain.url}/#token=${TOKEN}`);
    await page.locator('#orders-body tr').first().waitFor({ state: 'attached' });
    expect(await page.locator('#demo').count()).toBe(0);
    expect(await page.locator('button[data-action]').count()).toBe(0);
    await page.close();
  });

  it('are rendered in demo mode (so the check above can fail)', async () => {
    const page = await browser.newPage();
    await page.goto(`${demo.url}/#token=${TOKEN}`);
    await page.locator('#demo tr[data-target="broker"] button[data-action="kill"]').waitFor();
    expect(await page.locator('#demo button[data-action]').count()).toBe(9);
    await page.locator('#demo tr[data-target="inventory"] button[data-action="kill"]').waitFor();
    await screenshot(page, 'console-services-unreachable');
    await page.close();
  });

  it('refuse every action without the right token (401) and touch nothing', async () => {
    for (const token of [undefined, 'wrong-token-wrong-token', `${TOKEN}x`]) {
      const res = await post(demo, '/api/demo/broker/kill', token);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    expect((await post(demo, '/api/admin/redrive')).status).toBe(401);
    expect(calls).toEqual([]);
  });

  it('answer bad targets and actions with 400, and carry out a valid one', async () => {
    expect((await post(demo, '/api/demo/broker/explode', TOKEN)).status).toBe(400);
    expect((await post(demo, '/api/demo/database/kill', TOKEN)).status).toBe(400);
    expect((await post(demo, '/api/demo/broker/start', TOKEN)).status).toBe(409); // already running
    expect(calls).toEqual([]);

    const kill = await post(demo, '/api/demo/relay-orders/kill', TOKEN);
    expect(kill.status).toBe(200);
    expect(await kill.json()).toMatchObject({ running: false });
    const stop = await post(demo, '/api/demo/inventory/stop', TOKEN);
    expect(stop.status).toBe(200);
    expect(calls).toEqual(['relay-orders/kill', 'inventory/stop']);
  });
});
