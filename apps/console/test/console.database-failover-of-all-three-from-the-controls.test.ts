// `./dev demo --failover` in Chromium: under load, each of the three databases is failed over from
// the console's Databases panel — its standby's receipt paused, its primary killed with kill -9,
// the standby promoted, a new standby built — and the panel says what each failover cost: the
// commits lost with the primary, none of them announced (the standby wait is on), and no order
// left undecided once the saga settled. An audit from outside then reads every topic from offset 0
// against the promoted databases: no ghost event on any. Long: a demo, three pairs, three failovers.
import { type RunningDemo, startDemo } from '@outbox/devstack/testing/demo-process';
import { auditGhosts } from '@outbox/devstack/testing/ghost-audit';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsole, screenshot } from './browser.ts';

useLeakGuard();

const TOKEN = 'failover-test-token-0123456789';
const DATABASES = ['orders', 'inventory', 'billing'] as const;

let demo: RunningDemo | undefined;
let browser: Browser | undefined;
let page: Page;
let errors: string[];

beforeAll(async () => {
  demo = await startDemo(['--failover'], { CONSOLE_ADMIN_TOKEN: TOKEN });
  ({ browser, page, errors } = await openConsole(demo.consoleUrl, TOKEN));
  await page.locator('#databases tr[data-database="billing"]').waitFor();
}, 360_000);

afterAll(async () => {
  await browser?.close();
  await demo?.stop();
}, 180_000);

const row = (db: string) => page.locator(`#databases tr[data-database="${db}"]`);
const click = async (db: string, action: string) => {
  await row(db).locator(`button[data-action="${action}"]:not([disabled])`).click({ timeout: 60_000 });
};
const field = (db: string, name: string) => row(db).locator(`[data-field="${name}"]`);
const cost = (db: string, name: string) => row(db).locator(`[data-cost="${name}"]`);

/** Orders at about 20 a second until `signal`, at most five in flight; the ids answered 201. */
async function placeOrders(ordersUrl: string, signal: AbortSignal): Promise<string[]> {
  const acknowledged: string[] = [];
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; !signal.aborted; i++) {
    if (inFlight.size < 5) {
      const sent = fetch(`${ordersUrl}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          customerId: `failover-${i}`,
          currency: 'EUR',
          items: [{ sku: 'KB-101', quantity: 1 }],
        }),
        signal: AbortSignal.timeout(10_000),
      }).then(
        async (res) => {
          if (res.status === 201) acknowledged.push(((await res.json()) as { id: string }).id);
          else await res.body?.cancel();
        },
        () => {}, // the database is away (503) or the answer lost: not acknowledged
      );
      const tracked = sent.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await Promise.all(inFlight);
  return acknowledged;
}

/** Each database's URL as the services reach it, from the demo's start-up lines. */
function databaseUrls(output: string): Record<(typeof DATABASES)[number], string> {
  const url = (db: string) => {
    const match = output.match(new RegExp(`reach it at (postgresql://\\S+/${db})`));
    if (!match?.[1]) throw new Error(`the demo did not say where ${db} is`);
    return match[1];
  };
  return { orders: url('orders'), inventory: url('inventory'), billing: url('billing') };
}

describe('a database failover driven from the console', () => {
  it('fails over all three databases under load, counts what each lost, and announces none of it', async () => {
    if (!demo) throw new Error('no demo');
    // Bad input is refused before it reaches a database: an unknown database, an action without the token.
    const post = (path: string, token?: string) =>
      fetch(`${demo?.consoleUrl}/api/demo/databases/${path}`, {
        method: 'POST',
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
    const unknown = await post('payments/kill', TOKEN);
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');
    expect((await post('orders/kill')).status).toBe(401);
    const stopLoad = new AbortController();
    const load = placeOrders(demo.ordersUrl, stopLoad.signal);
    try {
      for (const db of DATABASES) {
        await click(db, 'pause');
        await expect
          .poll(() => field(db, 'standby').textContent(), { timeout: 60_000 })
          .toContain('receipt paused');
        await page.waitForTimeout(3_000); // commits of these seconds exist on the primary only
        await click(db, 'kill');
        await expect.poll(() => field(db, 'primary').textContent(), { timeout: 60_000 }).toBe('dead');
        await click(db, 'promote');
        await cost(db, 'events-announced').waitFor({ timeout: 180_000 });
        await click(db, 'rebuild');
        await expect.poll(() => field(db, 'standby').textContent(), { timeout: 180_000 }).toMatch(/^:\d+$/);
      }
    } finally {
      stopLoad.abort();
    }
    const acknowledged = await load;
    expect(acknowledged.length).toBeGreaterThan(100);

    // The orders primary died with commits its standby never received: the panel counts them.
    expect(Number.parseInt((await cost('orders', 'orders-lost').textContent()) ?? '', 10)).toBeGreaterThan(0);
    for (const db of DATABASES) {
      expect(await cost(db, 'events-announced').textContent()).toBe('0 of them announced');
      await expect
        .poll(() => cost(db, 'orders-undecided').textContent(), { timeout: 180_000, interval: 2_000 })
        .toBe('0 orders undecided');
    }
    await screenshot(page, 'console-database-failover');

    const audit = await auditGhosts(demo.kafkaBrokers, databaseUrls(demo.output()), acknowledged);
    expect(audit.topics.map((t) => [t.topic, t.ghosts])).toEqual([
      ['order.events', 0],
      ['reservation.events', 0],
      ['payment.events', 0],
    ]);
    expect(audit.lostOrdersAnnounced).toBe(0);
    expect(audit.ordersUndecided).toBe(0);
    expect(errors).toEqual([]);
  }, 900_000);
});
