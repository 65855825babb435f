// One demo (scripts/demo.ts) for the pictures: started as a child process on ports of its own, so
// it runs beside a developer's `./dev demo`, with Zipkin and Prometheus as the demo starts them,
// and stopped with Ctrl-C's signal, which stops everything it started. Its PostgreSQL is the
// demo's embedded one on a port of its own, started empty each time like its broker: the pictures
// show only their own orders, and a developer's demo databases are left alone.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../tests/docs/docReferences.ts';

/** Far from the demo's defaults (3001…, 8080, 9090, 9092, 9411). */
const BASE = 23_000;

const DEMO_PORTS = {
  base: BASE,
  orders: BASE + 1,
  inventory: BASE + 3,
  billing: BASE + 4,
  kafka: BASE + 92,
  console: BASE + 80,
  prometheus: BASE + 90,
  zipkin: BASE + 411,
  connect: BASE + 83,
  postgres: BASE + 432,
};

/** Nothing answers there, so the demo starts its embedded PostgreSQL (with wal_level=logical). */
export const DEMO_POSTGRES = `postgresql://postgres@127.0.0.1:${DEMO_PORTS.postgres}`;

/** The admin token the console is started with: the pictures press its buttons. */
export const DEMO_TOKEN = 'docs-screenshots-admin';

export type DemoRun = {
  consoleUrl: string;
  ordersUrl: string;
  stop: () => Promise<void>;
};

/**
 * Starts a demo and waits until its console answers. `env` adds the demo's own switches
 * (DEMO_KAFKA=cluster, RELAY_MODE_ORDERS=debezium, DEMO_PROMETHEUS=off…).
 */
export async function startDemo(label: string, env: Record<string, string> = {}): Promise<DemoRun> {
  const logDir = join(repoRoot, '.local', 'logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `docs-screenshots-${label}.log`);
  // Its own data, named by its ports, from nothing: the embedded server's, the broker's (events
  // a previous run left unread would reach consumers whose databases are new, as ghosts) and
  // Prometheus's (the charts show this run only). The cluster's data is the demo's own: kept.
  for (const dir of [
    `postgres-${DEMO_PORTS.postgres}`,
    `kafka/demo-${DEMO_PORTS.kafka}`,
    `prometheus/data-${DEMO_PORTS.prometheus}`,
  ]) {
    rmSync(join(repoRoot, '.local', dir), { recursive: true, force: true });
  }
  const child = spawn(process.execPath, [join(repoRoot, 'scripts', 'demo.ts')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      DEMO_BASE_PORT: String(BASE),
      KAFKA_PORT: String(DEMO_PORTS.kafka),
      CONSOLE_PORT: String(DEMO_PORTS.console),
      PROMETHEUS_PORT: String(DEMO_PORTS.prometheus),
      ZIPKIN_PORT: String(DEMO_PORTS.zipkin),
      CONNECT_PORT: String(DEMO_PORTS.connect),
      CONSOLE_ADMIN_TOKEN: DEMO_TOKEN,
      DEMO_POSTGRES_URL: DEMO_POSTGRES,
      DEMO_EMBEDDED_POSTGRES: 'on',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logFile);
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  console.log(`demo "${label}" starting (pid ${child.pid}, log ${logFile})`);
  const consoleUrl = `http://127.0.0.1:${DEMO_PORTS.console}`;
  await waitForConsole(child, consoleUrl, logFile);
  return {
    consoleUrl,
    ordersUrl: `http://127.0.0.1:${DEMO_PORTS.orders}`,
    stop: () => stopDemo(child),
  };
}

/** The banner comes last, once every app and the console are up: wait for the console to answer. */
async function waitForConsole(child: ChildProcess, url: string, logFile: string): Promise<void> {
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the demo exited (${child.exitCode}): see ${logFile}`);
    const answered = await fetch(`${url}/api/info`, { signal: AbortSignal.timeout(2_000) })
      .then((response) => response.ok)
      .catch(() => false);
    if (answered) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  child.kill('SIGINT');
  throw new Error(`the demo's console did not answer at ${url} within 10 minutes: see ${logFile}`);
}

async function stopDemo(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  await exited;
  clearTimeout(timer);
}

/**
 * The load generator against the demo (`npm run load`), for `seconds`, in the background: the
 * returned promise settles when it has sent its orders and followed them to their end.
 */
export function startLoad(run: DemoRun, flags: string[]): Promise<number> {
  const metrics = ['orders', 'inventory', 'billing']
    .map((name) => `${name}=http://127.0.0.1:${DEMO_PORTS[name as 'orders']}`)
    .join(',');
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, 'tools', 'loadgen', 'src', 'cli.ts'),
      '--url',
      run.ordersUrl,
      '--metrics',
      metrics,
      '--wait',
      '20s',
      ...flags,
    ],
    {
      cwd: repoRoot,
      env: { ...process.env, DEMO_POSTGRES_URL: DEMO_POSTGRES },
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}
