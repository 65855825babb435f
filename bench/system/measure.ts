/**
 * One step of the system benchmarks, and the capacity search made of steps: offer a constant rate
 * of valid orders to a running chaos stack, wait for the saga to settle, and say what it cost.
 * bench:system (per process, one broker) and bench:scaling (per process kind, n instances, one
 * broker or a cluster) both measure through here, so their figures mean the same thing.
 */
import type { startChaosStack } from '@outbox/chaos';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { collectOutcome, runLoad } from '@outbox/loadgen';
import {
  cpuSince,
  cpuSnapshot,
  grownBy,
  procTicks,
  readingsOf,
  rssMiB,
  TICKS_PER_SECOND,
} from '../support/cpu.ts';
import { loadavg } from '../support/environment.ts';
import { backendPids, postgresUrl, stackDatabaseUrls } from '../support/stack.ts';
import { nextRate, record, type SearchState, verdict } from './capacitySearch.ts';
import type { Step } from './records.ts';
import { refusalsBetween, scrapeOrders } from './refusals.ts';

export type Stack = Awaited<ReturnType<typeof startChaosStack>>;

/**
 * The server's write-ahead log position and how many checkpoints it has begun: read before and
 * after a step, they give the WAL written per order and the checkpoints within the step (a
 * checkpoint makes the next change of every page write the whole page to the WAL).
 */
async function walReading(): Promise<{ lsnBytes: bigint; checkpoints: number }> {
  const [row] = await queryOnce<{ lsn: string; checkpoints: number }>(
    postgresUrl,
    `select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as lsn,
            (checkpoints_timed + checkpoints_req)::int as checkpoints
       from pg_stat_bgwriter`,
  );
  return { lsnBytes: BigInt(row?.lsn ?? '0'), checkpoints: row?.checkpoints ?? 0 };
}

const round = (x: number, digits = 1) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : x);

export type StepOptions = {
  stack: Stack;
  /** Name → pids whose CPU to count (a process, or every process of one kind); `postgres` is added. */
  pids: Record<string, number[]>;
  rate: number;
  durationMs: number;
  /** How long the saga may take to settle after the load stops. */
  drainMs: number;
  /** The orders APIs to share the rate between, as a load balancer would (default: `orders` alone). */
  ordersUrls?: string[];
  /** Every outbox published by CDC: its rows stay pending, so settled means every order decided. */
  cdc?: boolean;
};

/** `rate` shared evenly between the orders APIs: one load generator each, run side by side. */
async function loadAll(ordersUrls: string[], rate: number, durationMs: number) {
  const results = await Promise.all(
    ordersUrls.map((ordersUrl) =>
      runLoad({
        ordersUrl,
        rate: rate / ordersUrls.length,
        durationMs,
        mix: { valid: 100 },
        concurrency: Math.ceil(256 / ordersUrls.length),
        // One attempt per order: the offered rate is the rate asked for. An order the API sheds
        // (503 overloaded) counts as shed, not retried into the next second's load.
        retry: { attempts: 1 },
      }),
    ),
  );
  return {
    orders: results.flatMap((r) => r.orders),
    accepted: results.reduce((sum, r) => sum + r.accepted, 0),
    shed: results.reduce((sum, r) => sum + r.shed, 0),
    rejected: results.reduce(
      (sum, r) => sum + Object.values(r.rejected).reduce((a, b) => a + b, 0) + r.unknownOutcome,
      0,
    ),
    // Client-side answer times of the first orders API (the only one but on a scaled stack).
    answerMs: results[0]?.answerMs,
    startedAt: Math.min(...results.map((r) => r.startedAt)),
    finishedAt: Math.max(...results.map((r) => r.finishedAt)),
  };
}

/** Offer `rate` orders/s for `durationMs`, then judge the step (capacitySearch.ts's verdict). */
export async function measureStep(options: StepOptions): Promise<Step> {
  const { stack, rate, durationMs, drainMs } = options;
  const pids = { ...options.pids, postgres: await backendPids(stack) };
  const before = readingsOf(pids, procTicks);
  const walBefore = await walReading();
  const machineBefore = cpuSnapshot({});
  const ordersUrls = options.ordersUrls ?? [stack.process('orders').url];
  const scrapedBefore = await scrapeOrders(ordersUrls[0] ?? '');
  const loadGeneratorBefore = process.cpuUsage();
  const load = await loadAll(ordersUrls, rate, durationMs);
  const loadGenerator = process.cpuUsage(loadGeneratorBefore);
  const refusals = refusalsBetween(scrapedBefore, await scrapeOrders(ordersUrls[0] ?? ''));
  const after = readingsOf(pids, procTicks);
  const walAfter = await walReading();
  const { machineBusy } = cpuSince(machineBefore, {});
  const [{ pending } = { pending: 0 }] = await queryOnce<{ pending: number }>(
    stack.databases.orders.url,
    `select count(*)::int as pending from orders where status = 'PENDING'`,
  );
  const rss = Object.fromEntries(
    Object.entries(pids)
      .filter(([name]) => name !== 'postgres')
      .map(([name, list]) => [name, list.reduce((sum, pid) => sum + rssMiB(pid), 0)]),
  );
  const orderIds = load.orders.flatMap((order) => (order.orderId ? [order.orderId] : []));
  const outcome = await collectOutcome({
    databaseUrls: stackDatabaseUrls(stack),
    orderIds,
    timeoutMs: drainMs,
    ...(options.cdc ? { outboxRowsStayPending: true } : {}),
  });
  const { cpuSeconds, cpuMsPerOrder } = cpuCost(before, after, load.accepted);
  const measured = {
    offeredRate: rate,
    // Accepted orders per second of the step: since the API sheds what it cannot take at once,
    // orders started per second no longer says how many it took.
    achievedRate: load.accepted / (durationMs / 1000),
    p99Ms: outcome.latencyMs.p99,
    pendingAtEnd: pending,
    settled: outcome.settled,
  };
  const { sustained, reasons } = verdict(measured);
  const { p50, p95, p99, max } = outcome.latencyMs;
  return {
    ...measured,
    accepted: load.accepted,
    shed: load.shed,
    rejected: load.rejected,
    ...(load.answerMs
      ? {
          answerP99Ms: {
            accepted: load.answerMs.accepted.p99,
            shed: load.answerMs.shed.p99,
          },
        }
      : {}),
    refusals,
    seconds: round((load.finishedAt - load.startedAt) / 1000, 1),
    latencyMs: { p50, p95, p99, max },
    sustained,
    reasons,
    cpuMsPerOrder,
    cpuSeconds,
    rssMiB: rss,
    loadGeneratorCpuSeconds: round((loadGenerator.user + loadGenerator.system) / 1e6, 2),
    machineBusy,
    walKiBPerOrder: round(Number(walAfter.lsnBytes - walBefore.lsnBytes) / 1024 / Math.max(1, load.accepted)),
    checkpoints: walAfter.checkpoints - walBefore.checkpoints,
    loadavg: loadavg(),
  };
}

/**
 * CPU seconds per process (or kind) between two readings of their ticks, and CPU ms per accepted
 * order, each with a `total`.
 */
function cpuCost(before: Record<string, number[]>, after: Record<string, number[]>, accepted: number) {
  const cpuSeconds: Record<string, number> = {};
  const cpuMsPerOrder: Record<string, number> = {};
  for (const [name, ticks] of Object.entries(grownBy(before, after))) {
    cpuSeconds[name] = round(ticks / TICKS_PER_SECOND, 2);
    cpuMsPerOrder[name] = round((ticks * 1000) / TICKS_PER_SECOND / Math.max(1, accepted), 2);
  }
  const total = (values: Record<string, number>) =>
    round(
      Object.values(values).reduce((sum, x) => sum + (Number.isFinite(x) ? x : 0), 0),
      2,
    );
  cpuSeconds.total = total(cpuSeconds);
  cpuMsPerOrder.total = total(cpuMsPerOrder);
  return { cpuSeconds, cpuMsPerOrder };
}

/** One line for the log. */
export const describeStep = (step: Step) =>
  `${step.offeredRate}/s: ${step.sustained ? 'sustained' : 'NOT sustained'} — accepted ${step.achievedRate.toFixed(1)}/s, p50 ${step.latencyMs.p50} ms, p99 ${step.latencyMs.p99} ms, ${step.cpuMsPerOrder.total} ms CPU/order, ${step.walKiBPerOrder ?? '—'} KiB WAL/order, ${step.checkpoints ?? '—'} checkpoints, load ${step.loadavg.join(' ')}${step.reasons.length ? ` (${step.reasons.join('; ')})` : ''}`;

export type SearchOptions = {
  measure: (rate: number) => Promise<Step>;
  limits: { start: number; max: number; resolution: number };
  /** Epoch ms after which no new step starts. */
  deadline: number;
  log: (message: string) => void;
};

/** Double, then bisect (capacitySearch.ts's nextRate) until the capacity is found or time is up. */
export async function searchCapacity({ measure, limits, deadline, log }: SearchOptions) {
  const steps: Step[] = [];
  let state: SearchState = {};
  let complete = true;
  for (let rate = nextRate(state, limits); rate !== undefined; rate = nextRate(state, limits)) {
    if (Date.now() > deadline) {
      log('deadline reached, stopping the search');
      complete = false;
      break;
    }
    const step = await measure(rate);
    steps.push(step);
    log(describeStep(step));
    state = record(state, rate, step.sustained);
  }
  return { capacity: state.best, steps, complete };
}
