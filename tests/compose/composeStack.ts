import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The compose stack as a test drives it: `./dev compose up` and `down`, exactly the commands the
 * README gives, and `docker` for what a test does to one container. These tests need a Docker
 * engine and build every image on first use (minutes), so they run only when asked:
 * OUTBOX_COMPOSE_TESTS=1 ./dev run npx vitest run tests/compose (docs/docker.md).
 */

/** The long tier (`./dev test --long`) runs them; elsewhere OUTBOX_COMPOSE_TESTS=1 asks for them. */
export const composeTestsEnabled =
  process.env.OUTBOX_COMPOSE_TESTS === '1' || process.env.TEST_TIER === 'long';
export const skipNote = composeTestsEnabled
  ? ''
  : ' [skipped: ./dev test --long runs the compose stack, or set OUTBOX_COMPOSE_TESTS=1]';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const PROJECT = 'outbox-reference';
/** Placing orders from the console needs its admin token; the stack gets one of its own. */
export const consoleAdminToken = randomBytes(16).toString('hex');

export const urls = {
  orders: 'http://127.0.0.1:3001',
  relayOrders: 'http://127.0.0.1:3002',
  console: 'http://127.0.0.1:8080',
  prometheus: 'http://127.0.0.1:9090',
  zipkin: 'http://127.0.0.1:9411',
};

/** `./dev compose <args>`; throws with its output when it fails. */
export function devCompose(args: string[], env: Record<string, string> = {}): string {
  const run = spawnSync(path.join(root, 'dev'), ['compose', ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, CONSOLE_ADMIN_TOKEN: consoleAdminToken, ...env },
    timeout: 20 * 60_000,
  });
  if (run.status !== 0) {
    throw new Error(`./dev compose ${args.join(' ')} exited ${run.status}:\n${run.stdout}\n${run.stderr}`);
  }
  return run.stdout;
}

/** The container of a compose service (its first replica), by Compose's labels: v1 and v2 name them differently. */
export function containerOf(service: string): string {
  const ids = docker(
    'ps',
    '-aq',
    '--filter',
    `label=com.docker.compose.project=${PROJECT}`,
    '--filter',
    `label=com.docker.compose.service=${service}`,
  ).trim();
  const id = ids.split('\n')[0];
  if (!id) throw new Error(`no container of the compose service ${service}`);
  return id;
}

export function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8' });
}

/** One SQL statement in a service database, as the compose superuser, inside the postgres container. */
export function psql(database: string, sql: string): string {
  return docker(
    'exec',
    containerOf('postgres'),
    'psql',
    '-U',
    'postgres',
    '-d',
    database,
    '-Atc',
    sql,
  ).trim();
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
