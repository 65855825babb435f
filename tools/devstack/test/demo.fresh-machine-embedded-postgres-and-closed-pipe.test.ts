// `./dev demo` on a machine where no PostgreSQL answers: the demo starts an embedded one, the
// services migrate their databases, an order is placed and confirmed; the start-up prints no
// ERROR, no warning and no stack trace; and when the demo's output pipe closes (`./dev demo | head`)
// the demo keeps running, and Ctrl-C still stops every process it started, broker and PostgreSQL included.
// Its Zipkin, killed, is started again and the demo says so. Settings given in the environment reach
// the processes they apply to (DATABASE_STANDBY_WAIT_MS the services and relays, RELAY_LINGER_MS the
// relays only), and the banner says what went where and what was not passed on.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDir, repoRoot } from '../src/paths.ts';
import { freePortBlock, isPortInUse } from '../src/ports.ts';
import { isProcessAlive, signal, waitForExit } from '../src/processes.ts';

const hookTimeout = 240_000;

let base: number;
let demo: ChildProcess;
let output = '';
let brokerPid: number | undefined;
let postgresPid: number | undefined;
const zipkinPids: number[] = [];
const zipkinPidFile = () => join(localDir, 'zipkin', 'demo', 'zipkin.pid');
const zipkinPid = () => Number(readFileSync(zipkinPidFile(), 'utf8').trim());
const kafkaDir = () => join(localDir, 'kafka', `demo-${base + 8}`);
const postgresDir = () => join(localDir, `postgres-${base}`);
const ordersUrl = () => `http://127.0.0.1:${base + 1}`;

async function placeOrder(customerId: string): Promise<string> {
  const res = await fetch(`${ordersUrl()}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId, currency: 'EUR', items: [{ sku: 'KB-101', quantity: 1 }] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function statusOf(id: string): Promise<string | undefined> {
  const res = await fetch(`${ordersUrl()}/orders/${id}`);
  return res.ok ? ((await res.json()) as { status: string }).status : undefined;
}

async function waitForStatus(id: string, wanted: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string | undefined;
  while (Date.now() < deadline) {
    last = await statusOf(id);
    if (last === wanted) return;
    await sleep(250);
  }
  throw new Error(`order ${id} is ${last}, not ${wanted}, after ${timeoutMs / 1000} s`);
}

beforeAll(async () => {
  base = await freePortBlock(11);
  demo = spawn(process.execPath, ['scripts/demo.ts'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      // Nothing listens there: the demo must bring its own PostgreSQL.
      DEMO_POSTGRES_URL: `postgresql://postgres@127.0.0.1:${base}`,
      DEMO_BASE_PORT: String(base),
      CONSOLE_PORT: String(base + 7),
      KAFKA_PORT: String(base + 8),
      ZIPKIN_PORT: String(base + 10),
      DEMO_PROMETHEUS: 'off',
      // Settings of docs/production.md's kind, harmless here: no standby is waited for without
      // DATABASE_WAIT_FOR_STANDBY, and a 1 ms linger changes nothing a test sees.
      DATABASE_STANDBY_WAIT_MS: '4321',
      RELAY_LINGER_MS: '1',
      DATABASE_WAIT_FOR_STANBY: 'any', // a typo: named, not passed on
      FORCE_COLOR: '0',
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  demo.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  demo.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const deadline = Date.now() + 200_000;
  while (!output.includes('Ctrl-C stops everything')) {
    if (demo.exitCode !== null) throw new Error(`the demo exited during start-up:\n${output}`);
    if (Date.now() > deadline) throw new Error(`the demo did not start within 200 s:\n${output}`);
    await sleep(250);
  }
  brokerPid = Number(readFileSync(join(kafkaDir(), 'broker.pid'), 'utf8').trim());
  postgresPid = Number(readFileSync(join(postgresDir(), 'postmaster.pid'), 'utf8').split('\n')[0]);
  if (output.includes('Zipkin is ready')) zipkinPids.push(zipkinPid());
}, hookTimeout);

/** The environment of the demo's process listening on `port` (one of the six apps'). */
function environmentOnPort(port: number): Record<string, string> {
  for (const pid of servicePids()) {
    try {
      const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
      const env = Object.fromEntries(
        entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
      );
      if (env.PORT === String(port)) return env;
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no process of the demo listens on ${port}`);
}

/** The demo's service processes (each in its own process group): this repo's apps on our ports. */
function servicePids(): number[] {
  const ours = new Set(Array.from({ length: 6 }, (_, i) => `PORT=${base + 1 + i}`));
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        if (!cmdline.includes(join(repoRoot, 'apps'))) return false;
        return readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .some((entry) => ours.has(entry));
      } catch {
        return false; // gone meanwhile, or not ours to read
      }
    })
    .map(Number);
}

afterAll(async () => {
  // Only when a test failed half-way: nothing of this file may outlive it.
  if (demo && demo.exitCode === null) demo.kill('SIGKILL');
  for (const pid of [brokerPid, postgresPid, ...zipkinPids, ...(base ? servicePids() : [])]) {
    if (pid && isProcessAlive(pid)) signal(pid, 'SIGKILL');
  }
  if (base) {
    rmSync(kafkaDir(), { recursive: true, force: true });
    rmSync(postgresDir(), { recursive: true, force: true });
  }
}, hookTimeout);

describe('the demo on a machine without PostgreSQL', () => {
  it('starts an embedded PostgreSQL and confirms an order, with a quiet start-up', async () => {
    expect(output).toContain(`No PostgreSQL answers at 127.0.0.1:${base}: starting an embedded one`);
    expect(postgresPid).toBeGreaterThan(0);
    expect(isProcessAlive(postgresPid ?? 0)).toBe(true);
    // Nothing a newcomer would take for a failure: no ERROR or WARN line, no stack trace, no Node warning.
    expect(output).not.toMatch(/ERROR|WARN|Warning|\n\s+at /);
    // The services' own log lines reach the terminal (the demo follows their log files).
    // They are read as the files grow, so the last may follow the banner by a moment.
    for (const line of [/\norders\s+│ \S+ INFO /, /\nrelay-billing\s+│ \S+ INFO /]) {
      const deadline = Date.now() + 10_000;
      while (!line.test(output) && Date.now() < deadline) await sleep(100);
      expect(output).toMatch(line);
    }

    const id = await placeOrder('fresh-machine');
    await waitForStatus(id, 'CONFIRMED', 60_000);
  }, 120_000);

  it("passes the caller's settings to the processes they apply to, and says so in its banner", () => {
    const [orders, relayOrders, inventory, billing, relayInventory, relayBilling] = [1, 2, 3, 4, 5, 6].map(
      (offset) => environmentOnPort(base + offset),
    );
    for (const env of [orders, relayOrders, inventory, billing, relayInventory, relayBilling]) {
      expect(env?.DATABASE_STANDBY_WAIT_MS).toBe('4321');
      expect(env).not.toHaveProperty('DATABASE_WAIT_FOR_STANBY');
    }
    for (const env of [relayOrders, relayInventory, relayBilling]) expect(env?.RELAY_LINGER_MS).toBe('1');
    for (const env of [orders, inventory, billing]) expect(env).not.toHaveProperty('RELAY_LINGER_MS');
    expect(output).toContain('DATABASE_STANDBY_WAIT_MS=4321 → orders, inventory, billing, the relays');
    expect(output).toContain('RELAY_LINGER_MS=1 → the relays');
    expect(output).toContain(
      "DATABASE_WAIT_FOR_STANBY is no setting of any of the demo's processes: not passed on (did you mean DATABASE_WAIT_FOR_STANDBY?)",
    );
  });

  it("listens on loopback only: the relays', consumers' and console's ports refuse another interface", async () => {
    const address = Object.values(networkInterfaces())
      .flat()
      .find((nic) => nic && nic.family === 'IPv4' && !nic.internal)?.address;
    if (!address) return; // a machine with loopback only has nothing to refuse
    const answers = (port: number) =>
      new Promise<boolean>((resolve) => {
        const socket = connect({ host: address, port, timeout: 2000 });
        const done = (answered: boolean) => {
          socket.destroy();
          resolve(answered);
        };
        socket.once('connect', () => done(true));
        socket.once('error', () => done(false));
        socket.once('timeout', () => done(false));
      });
    // The orders API (base + 1) takes HOST from its own config; the ops servers and the console here.
    for (const port of [base + 2, base + 3, base + 4, base + 5, base + 6, base + 7]) {
      expect({ port, answers: await answers(port) }).toEqual({ port, answers: false });
    }
  });

  it('starts Zipkin again when it dies, and says so', async () => {
    expect(output).toContain(
      `Zipkin is ready at http://127.0.0.1:${base + 10} (keeps the newest 65536 spans`,
    );
    const [first] = zipkinPids;
    if (first === undefined) throw new Error('the demo started no Zipkin');
    signal(first, 'SIGKILL');
    const deadline = Date.now() + 120_000;
    while (!output.includes('Zipkin is back at') && Date.now() < deadline) await sleep(250);
    expect(output).toMatch(
      /zipkin\s+│ \S+ INFO\s+Zipkin exited \(killed by SIGKILL\); the traces it held are lost/,
    );
    expect(output).toContain(`Zipkin is back at http://127.0.0.1:${base + 10}`);
    const second = zipkinPid();
    zipkinPids.push(second);
    expect(second).not.toBe(first);
    expect((await fetch(`http://127.0.0.1:${base + 10}/health`)).ok).toBe(true);
  }, 150_000);

  it('keeps running when its output pipe closes, and Ctrl-C then stops everything it started', async () => {
    // `./dev demo | head -5`: the reader goes away; the demo's next lines hit a closed pipe (EPIPE).
    demo.stdout?.destroy();
    demo.stderr?.destroy();
    const id = await placeOrder('after-the-pipe-closed'); // log lines are written after the close
    await waitForStatus(id, 'CONFIRMED', 60_000);
    expect(demo.exitCode).toBeNull();

    const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)));
    demo.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(await waitForExit(brokerPid ?? 0, 30_000)).toBe(true);
    expect(await waitForExit(postgresPid ?? 0, 30_000)).toBe(true);
    expect(servicePids()).toEqual([]);
    for (const pid of zipkinPids) expect(await waitForExit(pid, 30_000)).toBe(true);
    for (let port = base; port <= base + 10; port++)
      expect({ port, inUse: await isPortInUse(port) }).toEqual({ port, inUse: false });
  }, 150_000);
});
