// The system benchmark, the headline figure: how many orders per second the whole saga sustains.
//
//   npm run bench:system                          # both variants, 60 s steps (about 40-60 minutes)
//   node bench/system.ts --step 20s               # quicker, shorter steps (the report says so)
//   node bench/system.ts --variants current       # only the code of this checkout
//
// Each variant is the real system as processes — orders, inventory, billing and their three relays,
// started by the chaos suite's stack on fresh databases — on one Kafka broker of the benchmark's
// own. "current" is this checkout; "baseline" is the code of an earlier revision (--baseline-rev,
// default: the last commit before the throughput work), checked out into .local/bench/ and
// installed there, so the gain is a ratio measured side by side in one run, on the same machine.
//
// For each variant: raise stock and the payment limit (nothing is refused), warm up, then offer
// rising constant rates of valid orders (the load generator), each for --step: double while the
// saga keeps up, then bisect (bench/system/capacitySearch.ts says what "keeps up" means: the API
// accepts the rate, end-to-end p99 <= 1 s, no backlog left when the load stops, everything
// settles). Then latency at 50% and 90% of the capacity found, and at a fixed --fixed-rate.
// CPU ms per order per process (/proc utime+stime over the load) and resident memory at capacity.
// Results: bench/results/system.json and .md; docs/benchmarks.md explains them.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type * as StackModule from '@outbox/chaos';
import { startTestBroker } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { collectOutcome, runLoad } from '@outbox/loadgen';
import { durationMs, positiveNumber } from './support/args.ts';
import { procTicks, rssMiB, TICKS_PER_SECOND } from './support/cpu.ts';
import { loadavg, logger, machineInfo, postgresInfo, writeResults } from './support/environment.ts';
import { STACK_PROCESSES as PROCESSES, postgresUrl } from './support/stack.ts';
import { DEFAULT_CRITERIA, nextRate, record, type SearchState, verdict } from './system/capacitySearch.ts';
import { markdown, type Step, type Variant, type VariantReport } from './system/report.ts';

const BEFORE_THROUGHPUT_WORK = '63a180e';
const { values: args } = parseArgs({
  options: {
    variants: { type: 'string', default: 'baseline,current' },
    'baseline-rev': { type: 'string', default: BEFORE_THROUGHPUT_WORK },
    step: { type: 'string', default: '60s' },
    'start-rate': { type: 'string', default: '25' },
    'max-rate': { type: 'string', default: '1600' },
    'fixed-rate': { type: 'string', default: '30' },
    drain: { type: 'string', default: '30s' },
    deadline: { type: 'string', default: '75m' },
    out: { type: 'string', default: 'bench/results/system' },
  },
});
const stepMs = durationMs('step', args.step);
const drainMs = durationMs('drain', args.drain);
const deadline = Date.now() + durationMs('deadline', args.deadline);
const log = logger('bench:system');

type Stack = Awaited<ReturnType<typeof StackModule.startChaosStack>>;

/** The code of `rev` in its own worktree with its packages installed, or this checkout. */
function checkoutOf(variant: Variant): string {
  if (variant === 'current') return resolve('.');
  const rev = execFileSync('git', ['rev-parse', '--short', args['baseline-rev']], {
    encoding: 'utf8',
  }).trim();
  const dir = resolve(`.local/bench/baseline-${rev}`);
  if (!existsSync(join(dir, 'node_modules'))) {
    log(`preparing the baseline: ${rev} in ${dir} (git worktree, npm install, prisma generate)`);
    if (!existsSync(dir))
      execFileSync('git', ['worktree', 'add', '--detach', dir, rev], { stdio: 'inherit' });
    execFileSync('bash', ['-c', 'source scripts/setup.sh'], { cwd: dir, stdio: 'inherit' });
  }
  return dir;
}

async function startStack(variant: Variant, brokers: string[]): Promise<Stack> {
  // The chaos stack of that checkout: tools/chaos since the packages were split by role, packages/chaos before.
  const checkout = checkoutOf(variant);
  const stackModule = ['tools/chaos/src/stack.ts', 'packages/chaos/src/stack.ts']
    .map((path) => join(checkout, path))
    .find((path) => existsSync(path));
  if (!stackModule) throw new Error(`no chaos stack in ${checkout}`);
  const module = (await import(stackModule)) as typeof StackModule;
  const stack = await module.startChaosStack({
    label: `bench_${variant}`,
    kafkaBrokers: brokers,
    postgresUrl,
    // Nothing refused: every order is a valid one the saga confirms.
    env: { billing: { PAYMENT_LIMIT_CENTS: '100000000000' } },
  });
  await queryOnce(stack.databases.inventory.url, 'update stock set available = 1000000000');
  return stack;
}

async function backendPids(stack: Stack): Promise<number[]> {
  const names = Object.values(stack.databases).map((db) => db.name);
  const rows = await queryOnce<{ pid: number }>(
    postgresUrl,
    'select pid from pg_stat_activity where datname = any($1::text[])',
    [names],
  );
  return rows.map((row) => row.pid);
}

function processPids(stack: Stack, brokerPid: number | undefined): Record<string, number[]> {
  const pids: Record<string, number[]> = {};
  for (const name of PROCESSES) {
    const pid = stack.process(name).pid;
    pids[name] = pid ? [pid] : [];
  }
  pids.kafka = brokerPid ? [brokerPid] : [];
  return pids;
}

const ticksOf = (pids: Record<string, number[]>) =>
  Object.fromEntries(Object.entries(pids).map(([name, list]) => [name, list.map(procTicks)]));

async function measure(
  stack: Stack,
  brokerPid: number | undefined,
  rate: number,
  durationMs: number,
): Promise<Step> {
  const pids = processPids(stack, brokerPid);
  pids.postgres = await backendPids(stack);
  const before = ticksOf(pids);
  const load = await runLoad({
    ordersUrl: stack.process('orders').url,
    rate,
    durationMs,
    mix: { valid: 100 },
    concurrency: 256,
  });
  const after = ticksOf(pids);
  const [{ pending } = { pending: 0 }] = await queryOnce<{ pending: number }>(
    stack.databases.orders.url,
    `select count(*)::int as pending from orders where status = 'PENDING'`,
  );
  const rss = Object.fromEntries(
    Object.entries(pids)
      .filter(([name]) => name !== 'postgres')
      .map(([name, list]) => [name, list[0] ? rssMiB(list[0]) : Number.NaN]),
  );
  const orderIds = load.orders.flatMap((order) => (order.orderId ? [order.orderId] : []));
  const outcome = await collectOutcome({
    databaseUrls: {
      orders: stack.databases.orders.url,
      inventory: stack.databases.inventory.url,
      billing: stack.databases.billing.url,
    },
    orderIds,
    timeoutMs: drainMs,
  });
  const cpuMsPerOrder: Record<string, number> = {};
  for (const name of Object.keys(pids)) {
    // A PostgreSQL backend that exited during the step reads NaN: it counts for nothing.
    const ticks = (after[name] ?? []).reduce((sum, t, i) => {
      const start = before[name]?.[i] ?? Number.NaN;
      return Number.isFinite(t) && Number.isFinite(start) ? sum + t - start : sum;
    }, 0);
    cpuMsPerOrder[name] = round((ticks * 1000) / TICKS_PER_SECOND / Math.max(1, load.accepted), 2);
  }
  cpuMsPerOrder.total = round(
    Object.values(cpuMsPerOrder).reduce((sum, ms) => sum + (Number.isFinite(ms) ? ms : 0), 0),
    2,
  );
  const measured = {
    offeredRate: rate,
    achievedRate: load.achievedRate,
    p99Ms: outcome.latencyMs.p99,
    pendingAtEnd: pending,
    settled: outcome.settled,
  };
  const { sustained, reasons } = verdict(measured);
  const { p50, p95, p99, max } = outcome.latencyMs;
  return {
    ...measured,
    accepted: load.accepted,
    seconds: round((load.finishedAt - load.startedAt) / 1000, 1),
    latencyMs: { p50, p95, p99, max },
    sustained,
    reasons,
    cpuMsPerOrder,
    rssMiB: rss,
    loadavg: loadavg(),
  };
}

async function benchVariant(variant: Variant, brokers: string[], brokerPid: number | undefined) {
  const checkout = checkoutOf(variant);
  const revision = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
    cwd: checkout,
    encoding: 'utf8',
  }).trim();
  log(`${variant} (${revision}): starting the stack`);
  const stack = await startStack(variant, brokers);
  const report: VariantReport = { variant, checkout, revision, steps: [] };
  try {
    const describe = (step: Step) =>
      `${step.offeredRate}/s: ${step.sustained ? 'sustained' : 'NOT sustained'} — accepted ${step.achievedRate.toFixed(1)}/s, p50 ${step.latencyMs.p50} ms, p99 ${step.latencyMs.p99} ms, ${step.cpuMsPerOrder.total} ms CPU/order${step.reasons.length ? ` (${step.reasons.join('; ')})` : ''}`;
    log(`${variant}: warm-up`);
    await measure(stack, brokerPid, 20, 10_000);
    const limits = {
      start: positiveNumber('start-rate', args['start-rate']),
      max: positiveNumber('max-rate', args['max-rate']),
      resolution: 0.1,
    };
    let state: SearchState = {};
    for (let rate = nextRate(state, limits); rate !== undefined; rate = nextRate(state, limits)) {
      if (Date.now() > deadline) {
        log(`${variant}: deadline reached, stopping the search`);
        break;
      }
      const step = await measure(stack, brokerPid, rate, stepMs);
      report.steps.push(step);
      log(`${variant} ${describe(step)}`);
      state = record(state, rate, step.sustained);
    }
    report.capacity = state.best;
    if (state.best !== undefined && Date.now() < deadline) {
      report.atHalfCapacity = await measure(
        stack,
        brokerPid,
        Math.max(1, Math.round(state.best / 2)),
        stepMs,
      );
      log(`${variant} at 50%: ${describe(report.atHalfCapacity)}`);
      report.atNinetyPercent = await measure(
        stack,
        brokerPid,
        Math.max(1, Math.round(state.best * 0.9)),
        stepMs,
      );
      log(`${variant} at 90%: ${describe(report.atNinetyPercent)}`);
    }
    if (Date.now() < deadline) {
      report.atFixedRate = await measure(
        stack,
        brokerPid,
        positiveNumber('fixed-rate', args['fixed-rate']),
        stepMs,
      );
      log(`${variant} at ${args['fixed-rate']}/s: ${describe(report.atFixedRate)}`);
    }
  } finally {
    await stack.stop();
  }
  return report;
}

const round = (x: number, digits = 1) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : x);

const variants = args.variants.split(',').map((v) => v.trim()) as Variant[];
for (const variant of variants)
  if (variant !== 'baseline' && variant !== 'current') throw new Error(`unknown variant ${variant}`);
for (const variant of variants) checkoutOf(variant); // prepare the baseline before anything runs
log(`criteria: ${JSON.stringify(DEFAULT_CRITERIA)}`);
const { broker, dispose } = await startTestBroker('bench-system');
const reports: VariantReport[] = [];
const stopping = async () => {
  await dispose().catch(() => {});
  process.exit(130);
};
process.once('SIGINT', () => void stopping());
try {
  for (const variant of variants) reports.push(await benchVariant(variant, broker.brokers, broker.pid));
} finally {
  await dispose();
}
const meta = {
  date: new Date().toISOString(),
  machine: machineInfo(),
  postgres: (await postgresInfo(postgresUrl)).version,
  criteria: DEFAULT_CRITERIA,
  args,
};
writeResults(args.out, { ...meta, reports }, markdown(reports, meta, stepMs));
process.exit(0);
