// What one refusal costs: the orders API alone, its one admission slot held, answering nothing but
// 503 overloaded to a steady stream of orders, revision beside revision.
//
//   node bench/refusal-cost.ts --revisions floor,aeb037d,current --rate 1600 --seconds 10 --rounds 3
//
// Each round starts the orders API of every revision in turn (its own process, as the demo starts
// it, over a fresh database, with a real broker for its reply consumer, its spans exported to a
// receiver here), with a fixed admission limit of one slot and no queue. A test session locks the
// orders table and one order is sent: it takes the slot and waits on the lock. Then the load
// generator offers `--rate` orders a second for `--seconds`, each sent once; every one of them is
// refused on arrival. CPU per refusal is the API process's /proc ticks over the load, divided by
// the refusals; the load generator's own CPU (this process) is reported beside it, since on one
// machine it competes for the same cores. "floor" is a plain node:http server answering the same
// 503 to every request: what any Node HTTP server pays per answer on this machine. Past capacity, every refusal's CPU is taken from the
// orders being served (docs/performance.md, "A refusal at the door").
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@outbox/devstack/ports';
import { markdownTableLinesOf } from '@outbox/devstack/table';
import { startOtlpReceiver } from '@outbox/devstack/testing/otlp-receiver';
import { startTestBroker } from '@outbox/devstack/testing/test-broker';
import { createTestDatabase, queryOnce } from '@outbox/devstack/testing/test-database';
import { runLoad } from '@outbox/loadgen';
import pg from 'pg';
import { defineBench, int, list, number } from './support/bench.ts';
import { checkoutOf, revisionOf } from './support/checkouts.ts';
import { procTicks, TICKS_PER_SECOND } from './support/cpu.ts';
import { median } from './support/stats.ts';

const bench = defineBench({
  name: 'refusal-cost',
  about:
    'What one refusal on arrival costs the orders API (and the load generator), revision beside revision.',
  options: {
    revisions: list(
      'current',
      'revisions to compare; "current" is this checkout, "floor" a plain node:http server answering the same 503',
    ),
    rate: number(1600, 'orders/s offered, every one refused'),
    seconds: number(10, 'seconds of load per revision and round'),
    rounds: int(3, 'rounds; each runs every revision once, in turn'),
  },
});
const { args, log } = bench;

type Measured = {
  refused: number;
  /** Answers other than 503 overloaded, by reason (the load generator's): none expected. */
  other: Record<string, number>;
  apiCpuUsPerRefusal: number;
  loadGeneratorCpuUsPerRequest: number;
  answerMs: { p50: number; p99: number };
};

async function healthy(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the orders API exited (code ${child.exitCode})`);
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await sleep(200);
  }
  throw new Error('the orders API did not become healthy within 60 s');
}

/** A process that refuses every POST /orders: its URL and pid, and how to stop it. */
type Refuser = { url: string; pid: number; stop(): Promise<void> };

async function stopped(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
}

/** The orders API of `checkout` on a fresh database, its one admission slot held by an order waiting on a lock. */
async function heldApi(
  checkout: string,
  brokers: string[],
  tracingEnv: Record<string, string>,
): Promise<Refuser> {
  const db = await createTestDatabase('refusal_cost');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const api = spawn(
    process.execPath,
    [
      '--max-semi-space-size=16',
      '--import',
      '@outbox/runtime/tracing-register',
      join(checkout, 'apps/orders/src/main.ts'),
    ],
    {
      cwd: checkout,
      env: {
        PATH: process.env.PATH ?? '',
        LOG_LEVEL: 'warn',
        PORT: String(port),
        DATABASE_URL: db.url,
        KAFKA_BROKERS: brokers.join(','),
        ADMISSION_LIMITER: 'fixed',
        ADMISSION_LIMIT: '1',
        ADMISSION_QUEUE_LENGTH: '0',
        // The held order waits on the lock for the whole load: its statement must not time out first.
        DATABASE_STATEMENT_TIMEOUT_MS: '60000',
        DATABASE_TRANSACTION_TIMEOUT_MS: '120000',
        ...tracingEnv,
      },
      stdio: 'ignore',
    },
  );
  const locker = new pg.Client({ connectionString: db.url });
  const stop = async () => {
    await locker.query('rollback').catch(() => {});
    await locker.end().catch(() => {});
    await stopped(api);
    await db.drop();
  };
  try {
    await healthy(url, api);
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table orders in exclusive mode');
    void fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'held', currency: 'EUR', items: [{ sku: 'KB-101', quantity: 1 }] }),
    }).catch(() => undefined);
    for (let waiting = 0; waiting === 0; await sleep(50)) {
      const [row] = await queryOnce<{ n: number }>(
        db.url,
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      waiting = row?.n ?? 0;
    }
    return { url, pid: api.pid ?? Number.NaN, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The floor: a plain node:http server answering every request with the same 503 problem+json, no
 * framework, no metrics, no instrumentation. What any Node HTTP server pays per answer here.
 */
async function floorServer(): Promise<Refuser> {
  const port = await freePort();
  const body = JSON.stringify({
    type: 'urn:problem:overloaded',
    title: 'Overloaded',
    status: 503,
    detail: 'The orders API is at capacity and did not start this request.',
    instance: '/orders',
  });
  const script = `require('node:http').createServer((req, res) => {
    if (req.url === '/healthz') return res.end('{}');
    res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' });
    res.end(${JSON.stringify(body)});
  }).listen(${port}, '127.0.0.1');`;
  const server = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  await healthy(url, server);
  return { url, pid: server.pid ?? Number.NaN, stop: () => stopped(server) };
}

/** `rate` orders a second at `refuser` for --seconds, each sent once: its CPU per refusal, and ours. */
async function offer(refuser: Refuser): Promise<Measured> {
  const ticksBefore = procTicks(refuser.pid);
  const cpuBefore = process.cpuUsage();
  const load = await runLoad({
    ordersUrl: refuser.url,
    rate: args.rate,
    durationMs: args.seconds * 1000,
    mix: { valid: 100 },
    concurrency: 256,
    retry: { attempts: 1 },
  });
  const cpu = process.cpuUsage(cpuBefore);
  const apiUs = ((procTicks(refuser.pid) - ticksBefore) * 1e6) / TICKS_PER_SECOND;
  const answers = load.answerMs.shed;
  return {
    refused: load.shed,
    other: load.rejected,
    apiCpuUsPerRefusal: Math.round(apiUs / Math.max(1, load.shed)),
    loadGeneratorCpuUsPerRequest: Math.round((cpu.user + cpu.system) / Math.max(1, load.orders.length)),
    answerMs: { p50: answers.p50, p99: answers.p99 },
  };
}

const FLOOR = 'floor';
const variants = args.revisions.map((name) => {
  if (name === FLOOR) return { name, checkout: undefined, revision: 'node:http alone' };
  const checkout = checkoutOf(name === 'current' ? undefined : name, log);
  return { name, checkout, revision: revisionOf(checkout) };
});
const { broker, dispose } = await startTestBroker('bench-refusal-cost');
const receiver = await startOtlpReceiver();
const rounds: Record<string, Measured[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
try {
  for (let round = 1; round <= args.rounds; round++) {
    for (const variant of variants) {
      const refuser = variant.checkout
        ? await heldApi(variant.checkout, broker.brokers, receiver.tracingEnv('orders'))
        : await floorServer();
      const measured = await offer(refuser).finally(() => refuser.stop());
      rounds[variant.name]?.push(measured);
      log(
        `round ${round}, ${variant.name} (${variant.revision}): ${measured.refused} refused, other answers ${JSON.stringify(measured.other)}, ` +
          `${measured.apiCpuUsPerRefusal} µs of the API's CPU per refusal, load generator ${measured.loadGeneratorCpuUsPerRequest} µs per request`,
      );
    }
  }
} finally {
  await receiver.close();
  await dispose();
}

/** What bench/results/refusal-cost/*.json holds besides the run record (docs/performance.md reads it). */
export type RefusalCost = {
  variants: {
    name: string;
    revision: string;
    rounds: Measured[];
    apiCpuUsPerRefusal: number;
    loadGeneratorCpuUsPerRequest: number;
    answerP99Ms: number;
  }[];
};

const summary: RefusalCost['variants'] = variants.map((variant) => {
  const measured = rounds[variant.name] ?? [];
  return {
    name: variant.name,
    revision: variant.revision,
    rounds: measured,
    apiCpuUsPerRefusal: median(measured.map((m) => m.apiCpuUsPerRefusal)),
    loadGeneratorCpuUsPerRequest: median(measured.map((m) => m.loadGeneratorCpuUsPerRequest)),
    answerP99Ms: median(measured.map((m) => m.answerMs.p99)),
  };
});
const first = summary[0];
const markdown = [
  `# What one refusal costs the orders API`,
  '',
  `${args.rate} orders/s offered for ${args.seconds} s per revision and round, every one refused on arrival (one admission slot, held; no queue); ${args.rounds} rounds, medians; spans exported to a receiver (a refusal starts none).`,
  '',
  ...markdownTableLinesOf(summary, {
    revision: (s) => `${s.name} (\`${s.revision}\`)`,
    'API CPU µs per refusal (median)': (s) => s.apiCpuUsPerRefusal,
    [`÷ ${first?.name ?? ''}`]: (s) =>
      first?.apiCpuUsPerRefusal ? (s.apiCpuUsPerRefusal / first.apiCpuUsPerRefusal).toFixed(2) : '—',
    'each round': (s) => s.rounds.map((m) => m.apiCpuUsPerRefusal).join(', '),
    'load generator CPU µs per request': (s) => s.loadGeneratorCpuUsPerRequest,
    'answer p99 ms': (s) => s.answerP99Ms.toFixed(1),
  }),
].join('\n');
bench.write(
  { variants: summary },
  markdown,
  'the orders API exports spans to an OTLP receiver in this process',
);
process.exit(0);
