// The compose stack as a test drives it: `./dev compose up` and `down`, exactly the commands the
// README gives, and `docker` for what a test does to one container, both from the chaos suite's
// compose target (tools/chaos/src/compose/composeStack.ts), which drives the same stack. These tests
// need a Docker engine and build every image on first use (minutes), so they run only when asked:
// OUTBOX_COMPOSE_TESTS=1 ./dev run npx vitest run tests/compose (docs/docker.md).
import { randomBytes } from 'node:crypto';
import { containerOf, devCompose as devComposeOf, docker } from '@outbox/chaos/compose';

/** The long tier (`./dev test --long`) runs them; elsewhere OUTBOX_COMPOSE_TESTS=1 asks for them. */
export const composeTestsEnabled =
  process.env.OUTBOX_COMPOSE_TESTS === '1' || process.env.TEST_TIER === 'long';
export const skipNote = composeTestsEnabled
  ? ''
  : ' [skipped: ./dev test --long runs the compose stack, or set OUTBOX_COMPOSE_TESTS=1]';

/** Placing orders from the console needs its admin token; the stack gets one of its own. */
export const consoleAdminToken = randomBytes(16).toString('hex');

export const urls = {
  orders: 'http://127.0.0.1:3001',
  relayOrders: 'http://127.0.0.1:3002',
  console: 'http://127.0.0.1:8080',
  prometheus: 'http://127.0.0.1:9090',
  zipkin: 'http://127.0.0.1:9411',
};

/** `./dev compose <args>` with the test's console admin token; throws with its output when it fails. */
export function devCompose(args: string[], env: Record<string, string> = {}): void {
  devComposeOf(args, { CONSOLE_ADMIN_TOKEN: consoleAdminToken, ...env });
}

/** One SQL statement in a service database, as the compose superuser, inside the postgres container. */
export async function psql(database: string, sql: string): Promise<string> {
  return docker('exec', await containerOf('postgres'), 'psql', '-U', 'postgres', '-d', database, '-Atc', sql);
}

export async function json<T>(url: string, init?: RequestInit): Promise<{ status: number; body: T }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as T };
}

export const order = (customerId: string) => ({
  customerId,
  currency: 'EUR',
  items: [{ sku: 'KB-101', quantity: 1 }],
});
