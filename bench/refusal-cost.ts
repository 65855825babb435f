// What one refusal costs: the orders API alone, its one admission slot held, answering nothing but
// 503 overloaded to a steady stream of orders, revision beside revision.
//
//   node bench/refusal-cost.ts --revisions aeb037d,current --rate 1600 --seconds 10 --rounds 3
//
// Each round starts the orders API of every revision in turn (its own process, as the demo starts
// it, over a fresh database, with a real broker for its reply consumer, its spans exported to a
// receiver here), with a fixed admission limit of one slot and no queue. A test session locks the
// orders table and one order is sent: it takes the slot and waits on the lock. Then the load
// generator offers `--rate` orders a second for `--seconds`, each sent once; every one of them is
// refused on arrival. CPU per refusal is the API process's /proc ticks over the load, divided by
// the refusals; the load generator's own CPU (this process) is reported beside it, since on one
// machine it competes for the same cores. Past capacity, every refusal's CPU is taken from the
// orders being served (docs/performance.md, "A refusal at the door").
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@outbox/devstack/ports';
import { markdownTableLines } from '@outbox/devstack/table';
import { startOtlpReceiver } from '@outbox/devstack/testing/otlp-receiver';
import { startTestBroker } from '@outbox/devstack/testing/test-broker';
import { createTestDatabase, queryOnce } from '@outbox/devstack/testing/test-database';
import { runLoad } from '@outbox/loadgen';
import pg from 'pg';
import { defineBench, int, list, number } from './support/bench.ts';
import { checkoutOf, revisionOf } from './support/checkouts.ts';
import { procTicks, TICKS_PER_SECOND } from './support/cpu.ts';

const bench = defineBench({
  name: 'refusal-cost',
  about:
    'What one refusal on arrival costs the orders API (and the load generator), revision beside revision.',
  options: {
    revisions: list('current', 'revisions to compare; "current" is this checkout'),
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

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
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

/** One revision, one round: the API started, its slot held, `rate` refusals a second measured. */
async function measure(
  checkout: string,
  brokers: string[],
  tracingEnv: Record<string, string>,
): Promise<Measured> {
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
        ...tracingEnv,
      },
      stdio: 'ignore',
    },
  );
  const locker = new pg.Client({ connectionString: db.url });
  try {
    await healthy(url, api);
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table orders in exclusive mode');
    const held = fetch(`${url}/orders`, {
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
    const pid = api.pid ?? Number.NaN;
    const ticksBefore = procTicks(pid);
    const cpuBefore = process.cpuUsage();
    const load = await runLoad({
      ordersUrl: url,
      rate: args.rate,
      durationMs: args.seconds * 1000,
      mix: { valid: 100 },
      concurrency: 256,
      retry: { attempts: 1 },
    });
    const cpu = process.cpuUsage(cpuBefore);
    const apiUs = ((procTicks(pid) - ticksBefore) * 1e6) / TICKS_PER_SECOND;
    await locker.query('rollback');
    await held;
    const answers = load.answerMs.shed;
    return {
      refused: load.shed,
      other: load.rejected,
      apiCpuUsPerRefusal: Math.round(apiUs / Math.max(1, load.shed)),
      loadGeneratorCpuUsPerRequest: Math.round((cpu.user + cpu.system) / Math.max(1, load.orders.length)),
      answerMs: { p50: answers.p50, p99: answers.p99 },
    };
  } finally {
    await locker.end().catch(() => {});
    api.kill('SIGTERM');
    if (api.exitCode === null) await new Promise((resolve) => api.once('exit', resolve));
    await db.drop();
  }
}

const variants = args.revisions.map((name) => {
  const checkout = checkoutOf(name === 'current' ? undefined : name, log);
  return { name, checkout, revision: revisionOf(checkout) };
});
const { broker, dispose } = await startTestBroker('bench-refusal-cost');
const receiver = await startOtlpReceiver();
const rounds: Record<string, Measured[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
try {
  for (let round = 1; round <= args.rounds; round++) {
    for (const variant of variants) {
      const measured = await measure(variant.checkout, broker.brokers, receiver.tracingEnv('orders'));
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

const summary = variants.map((variant) => {
  const measured = rounds[variant.name] ?? [];
  return {
    ...variant,
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
  ...markdownTableLines(
    [
      'revision',
      'API CPU µs per refusal (median)',
      `÷ ${first?.name ?? ''}`,
      'each round',
      'load generator CPU µs per request',
      'answer p99 ms',
    ],
    summary.map((s) => [
      `${s.name} (\`${s.revision}\`)`,
      String(s.apiCpuUsPerRefusal),
      first?.apiCpuUsPerRefusal ? (s.apiCpuUsPerRefusal / first.apiCpuUsPerRefusal).toFixed(2) : '—',
      s.rounds.map((m) => m.apiCpuUsPerRefusal).join(', '),
      String(s.loadGeneratorCpuUsPerRequest),
      s.answerP99Ms.toFixed(1),
    ]),
  ),
].join('\n');
bench.write(
  { variants: summary },
  markdown,
  'the orders API exports spans to an OTLP receiver in this process',
);
process.exit(0);
