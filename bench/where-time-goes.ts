// Where the time goes at one fixed rate: the whole system as processes (the chaos suite's stack,
// as bench:system starts it), a steady load of valid orders, and for that window
//   - CPU milliseconds per order of every process (each app, each relay, the Kafka JVM, the
//     PostgreSQL backends of the three databases), from /proc, and each process's resident memory;
//   - how long each process's main thread waited for a core (/proc/<pid>/schedstat);
//   - every SQL statement the system ran, how many times per order and its mean execution time,
//     from pg_stat_statements (when the server loads it; the report says how to turn it on).
//
//   node bench/where-time-goes.ts [--help]
//
// --cpu-prof: every Node process also writes a V8 CPU profile (it costs them some CPU); the report
// splits each one's busy main-thread time in the load window by library (Prisma, node-postgres,
// kafkajs, HTTP, ...) and says how much of it was socket writes.
//
// --broker-requests: the broker logs every request it completes (kafka.request.logger), and the
// report counts the window's requests per order by API and by client (it costs the broker CPU of
// its own: compare such runs with each other).
//
// Not a capacity search (that is bench:system): one rate, so two revisions can be compared
// statement by statement. docs/performance.md shows how we used it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startChaosStack } from '@outbox/chaos';
import { markdownTableLines, markdownTableLinesOf } from '@outbox/devstack/table';
import { startOtlpReceiver, tracingEnvForStack } from '@outbox/devstack/testing/otlp-receiver';
import { startTestBroker } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { collectOutcome, type LatencySummary, runLoad } from '@outbox/loadgen';
import { defineBench, env, flag, number, text } from './support/bench.ts';
import {
  cpuSince,
  cpuSnapshot,
  grownBy,
  procTicks,
  readingsOf,
  rssMiB,
  runQueueWaitNs,
  TICKS_PER_SECOND,
} from './support/cpu.ts';
import { type MachineInfo, machineInfo } from './support/environment.ts';
import {
  backendPids,
  STACK_PROCESSES as PROCESSES,
  postgresUrl,
  stackDatabaseUrls,
} from './support/stack.ts';
import {
  type BrokerRequests,
  brokerRequests,
  brokerRequestsLines,
  logOffset,
  requestLogJvmOptions,
} from './where-time-goes/brokerRequests.ts';
import {
  familiesPerOrder,
  statementFamilySql,
  transactionsPerOrder,
  transactionsSoFar,
} from './where-time-goes/counts.ts';
import { type OutboxState, outboxState, statementsAvailable } from './where-time-goes/outboxState.ts';
import { postgresClients } from './where-time-goes/postgresClients.ts';
import { profilesOf } from './where-time-goes/profiles.ts';

const bench = defineBench({
  name: 'where-time-goes',
  about:
    'Where the time goes at one fixed rate: CPU and memory of every process of the stack, its waits for ' +
    'a core, and every SQL statement per order.',
  options: {
    rate: number(40, 'orders/s'),
    seconds: number(20, 'seconds of load'),
    // A longer or faster warm-up grows the tables first, as a long bench:system run does.
    warmupRate: number(20, 'orders/s of the warm-up'),
    warmupSeconds: number(8, 'seconds of warm-up'),
    // Run once with and once without to see what tracing costs.
    tracing: flag(
      "every process exports its spans (OTLP/HTTP, the SDK's default batching) to a receiver here",
    ),
    // V8's young generation size, say, to compare CPU and memory against a run without.
    nodeOptions: text('', 'NODE_OPTIONS for every Node process of the stack'),
    env: env('KEY=VALUE for every process of the stack, repeatable (RELAY_LINGER_MS=20, say)'),
    cpuProf: flag('every Node process writes a V8 CPU profile; the report splits it by library'),
    brokerRequests: flag("the broker logs every request; the report counts the window's per order"),
  },
});
const { args } = bench;
const { rate, seconds } = args;
const log = bench.log;

type Statement = {
  database: string;
  family: string;
  calls: number;
  rows: number;
  meanMs: number;
  maxMs: number;
  query: string;
};

/** What this bench writes (`<out>.json`, beside the run record writeResults adds). */
export type WhereTimeGoes = {
  date: string;
  machine: MachineInfo;
  warmup: { rate: number; seconds: number };
  tracing: boolean;
  nodeOptions: string;
  env: Record<string, string>;
  /** With --tracing: the spans the receiver got. */
  spansReceived?: number;
  rate: number;
  seconds: number;
  accepted: number;
  /** Orders the API refused with 503 overloaded (each sent once). */
  shed?: number;
  /**
   * The machine over the load window: its busy share of every core, and this process's CPU (the
   * load generator's, and the bench's own bookkeeping) per accepted order.
   */
  loadWindow?: { machineBusy: number; loadGeneratorMsPerOrder: number };
  latencyMs: LatencySummary;
  cpuMsPerOrder: Record<string, number>;
  /** PostgreSQL's CPU ms per order by client (application_name), and the whole server's (`server`). */
  postgresByClient?: Record<string, number>;
  waitMsPerOrder: Record<string, number>;
  rssMiB: Record<string, number>;
  transactionsPerOrder: Record<string, number>;
  statementFamiliesPerOrder: ReturnType<typeof familiesPerOrder>;
  /** Empty when the server does not load pg_stat_statements. */
  statements: Statement[];
  outboxes: OutboxState[];
  /** With --cpu-prof: per Node process, its busy time in the window by part. */
  profiles: Awaited<ReturnType<typeof profilesOf>>;
  /** With --broker-requests. */
  brokerRequests?: BrokerRequests;
};

const { broker, dispose } = await startTestBroker(
  'where-time-goes',
  args.brokerRequests ? { jvmOptions: requestLogJvmOptions() } : {},
);
const receiver = args.tracing ? await startOtlpReceiver() : undefined;
const tracingEnv = receiver ? tracingEnvForStack(receiver) : {};
for (const env of Object.values(tracingEnv)) delete env.OTEL_BSP_SCHEDULE_DELAY; // the SDK's default
const profileDir = args.cpuProf ? mkdtempSync(join(tmpdir(), 'where-time-goes-')) : undefined;
const nodeOptions = [args.nodeOptions, profileDir ? `--cpu-prof --cpu-prof-dir=${profileDir}` : '']
  .filter(Boolean)
  .join(' ');
const stackEnv: Record<string, Record<string, string>> = Object.fromEntries(
  PROCESSES.map((name) => [
    name,
    { ...tracingEnv[name], ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) },
  ]),
);
const extraEnv = args.env;
for (const name of PROCESSES) stackEnv[name] = { ...stackEnv[name], ...extraEnv };
stackEnv.billing = { ...stackEnv.billing, PAYMENT_LIMIT_CENTS: '100000000000' };
const stack = await startChaosStack({
  label: 'wtg',
  kafkaBrokers: broker.brokers,
  postgresUrl,
  env: stackEnv,
});
try {
  await queryOnce(stack.databases.inventory.url, 'update stock set available = 1000000000');
  const warmup = {
    rate: args.warmupRate,
    seconds: args.warmupSeconds,
  };
  log(`warm-up: ${warmup.rate} orders/s for ${warmup.seconds} s`);
  await runLoad({
    ordersUrl: stack.process('orders').url,
    rate: warmup.rate,
    durationMs: warmup.seconds * 1000,
    mix: { valid: 100 },
    concurrency: 256,
  });
  await sleep(3_000);

  const pids: Record<string, number[]> = Object.fromEntries(
    PROCESSES.map((name) => [name, [stack.process(name).pid ?? Number.NaN]]),
  );
  pids.kafka = [broker.pid ?? Number.NaN];
  const names = Object.values(stack.databases).map((db) => db.name);
  pids.postgres = await backendPids(stack);
  const clients = await postgresClients(postgresUrl, names);
  const withStatements = await statementsAvailable();
  if (withStatements) await queryOnce(postgresUrl, 'select pg_stat_statements_reset()');
  const transactionsBefore = await transactionsSoFar(names);
  const ticks = () => readingsOf(pids, procTicks);
  // The Kafka JVM's main thread only waits for its other threads: its figure would mean nothing.
  const { kafka: _kafka, ...waiting } = pids;
  const waits = () => readingsOf(waiting, runQueueWaitNs);
  const brokerLogFrom = logOffset(broker.logFile);
  const before = ticks();
  const machineBefore = cpuSnapshot({});
  const clientsBefore = clients.snapshot();
  const waitedBefore = waits();
  const nowUs = () => Number(process.hrtime.bigint() / 1000n); // the clock V8 stamps samples with
  const window = { fromUs: nowUs(), toUs: 0 };
  log(`load: ${rate} orders/s for ${seconds} s`);
  const load = await runLoad({
    ordersUrl: stack.process('orders').url,
    rate,
    durationMs: seconds * 1000,
    mix: { valid: 100 },
    concurrency: 256,
  });
  const after = ticks();
  const machineWindow = cpuSince(machineBefore, {});
  const clientsAfter = clients.snapshot();
  const waitedAfter = waits();
  const requests = args.brokerRequests
    ? brokerRequests(broker.logFile, brokerLogFrom, logOffset(broker.logFile), load.accepted)
    : undefined;
  window.toUs = nowUs();
  const rss = Object.fromEntries(
    Object.entries(pids)
      .filter(([name]) => name !== 'postgres')
      .map(([name, [pid]]) => [name, rssMiB(pid as number)]),
  );
  /** Per process, what its counters grew by over the window, in ms per accepted order. */
  const perOrderOf = (start: Record<string, number[]>, end: Record<string, number[]>, msPerUnit: number) =>
    Object.fromEntries(
      Object.entries(grownBy(start, end)).map(([name, grown]) => [
        name,
        Number(((grown * msPerUnit) / Math.max(1, load.accepted)).toFixed(2)),
      ]),
    );
  const cpuMsPerOrder: Record<string, number> = perOrderOf(before, after, 1000 / TICKS_PER_SECOND);
  const waitMsPerOrder = perOrderOf(waitedBefore, waitedAfter, 1e-6);
  cpuMsPerOrder.total = Number(
    Object.values(cpuMsPerOrder)
      .reduce((a, b) => a + b, 0)
      .toFixed(2),
  );
  const transactions = transactionsPerOrder(
    transactionsBefore,
    await transactionsSoFar(names),
    load.accepted,
  );
  const statements = withStatements
    ? await queryOnce<Statement>(
        postgresUrl,
        `select regexp_replace(d.datname, '^chaos_wtg_([a-z]+)_.*$', '\\1') as database, s.calls::int as calls, s.rows::int as rows,
                ${statementFamilySql} as family,
                round(s.mean_exec_time::numeric, 3)::float as "meanMs",
                round(s.max_exec_time::numeric, 3)::float as "maxMs",
                left(regexp_replace(s.query, '\\s+', ' ', 'g'), 140) as query
           from pg_stat_statements s join pg_database d on d.oid = s.dbid
          where d.datname = any($1) order by s.calls desc, s.query`,
        [names],
      )
    : [];
  const outboxes = await Promise.all(
    Object.entries(stack.databases).map(([name, db]) => outboxState(name, db.url)),
  );
  const outcome = await collectOutcome({
    databaseUrls: stackDatabaseUrls(stack),
    orderIds: load.orders.flatMap((order) => (order.orderId ? [order.orderId] : [])),
    timeoutMs: 30_000,
  });
  const profiles = profileDir ? await profilesOf(stack, profileDir, window) : {};
  const perOrder = (calls: number) => (calls / Math.max(1, load.accepted)).toFixed(2);
  const msPerOrder = (ms: number) => (ms / Math.max(1, load.accepted)).toFixed(2);
  const report: WhereTimeGoes = {
    date: new Date().toISOString(),
    machine: machineInfo(),
    warmup,
    tracing: args.tracing,
    nodeOptions,
    env: extraEnv,
    spansReceived: receiver?.spans.length,
    rate,
    seconds,
    accepted: load.accepted,
    shed: load.shed,
    loadWindow: {
      machineBusy: machineWindow.machineBusy,
      loadGeneratorMsPerOrder: Number(
        (((machineWindow.seconds.bench ?? 0) * 1000) / Math.max(1, load.accepted)).toFixed(2),
      ),
    },
    latencyMs: outcome.latencyMs,
    cpuMsPerOrder,
    postgresByClient: clients.msPerOrder(clientsBefore, clientsAfter, load.accepted),
    waitMsPerOrder,
    rssMiB: rss,
    transactionsPerOrder: transactions,
    statementFamiliesPerOrder: familiesPerOrder(statements, load.accepted),
    statements,
    outboxes,
    profiles,
    ...(requests ? { brokerRequests: requests } : {}),
  };
  const markdown = [
    '# Where the time goes',
    '',
    `Run ${report.date}; ${JSON.stringify(report.machine)}; tracing ${receiver ? `on (${receiver.spans.length} spans exported)` : 'off'}; NODE_OPTIONS ${nodeOptions ? `\`${nodeOptions}\`` : 'none'}; extra environment ${
      Object.keys(extraEnv).length
        ? `\`${Object.entries(extraEnv)
            .map(([key, value]) => `${key}=${value}`)
            .join(' ')}\``
        : 'none'
    }; after a warm-up of ${warmup.rate} orders/s for ${warmup.seconds} s, ` +
      `${rate} orders/s offered for ${seconds} s, ${load.accepted} accepted, ${load.shed} shed; ` +
      `the machine ${Math.round(machineWindow.machineBusy * 100)}% busy, the load generator ${report.loadWindow?.loadGeneratorMsPerOrder} ms of CPU per accepted order; ` +
      `end-to-end p50 / p99 ${outcome.latencyMs.p50} / ${outcome.latencyMs.p99} ms.`,
    '',
    ...markdownTableLines(
      ['process', 'CPU ms per order', 'main thread waiting for a core, ms per order', 'RSS MiB'],
      Object.entries(cpuMsPerOrder).map(([name, ms]) => [
        name,
        String(ms),
        String(waitMsPerOrder[name] ?? '—'),
        String(rss[name] ?? '—'),
      ]),
    ),
    '',
    "PostgreSQL's CPU ms per order by client (the stack's backends by application_name), and the whole server's (`server`: every process of it, those that ended in the window included, e.g. autovacuum workers, the WAL writer):",
    '',
    ...markdownTableLines(
      ['client', 'CPU ms per order'],
      Object.entries(report.postgresByClient ?? {}).map(([client, ms]) => [client, String(ms)]),
    ),
    '',
    withStatements
      ? `Statements per order (pg_stat_statements): ${perOrder(statements.reduce((sum, s) => sum + s.calls, 0))} in all.`
      : 'pg_stat_statements is not loaded: `alter system set shared_preload_libraries = pg_stat_statements`, restart, `create extension pg_stat_statements`.',
    '',
    ...markdownTableLinesOf(report.statementFamiliesPerOrder, {
      'statement family': (f) => f.family,
      'calls per order': (f) => f.perOrder.toFixed(3),
    }),
    '',
    `Transactions per order (pg_stat_database, commits and rollbacks; approximate at the window's ends): ${Object.entries(
      transactions,
    )
      .map(([database, n]) => `${database} ${n}`)
      .join(', ')}.`,
    '',
    ...markdownTableLinesOf(statements, {
      database: (s) => s.database,
      'calls per order': (s) => perOrder(s.calls),
      'mean ms': (s) => s.meanMs,
      'max ms': (s) => s.maxMs,
      statement: (s) => `\`${s.query.replaceAll('|', '\\|')}\``,
    }),
    '',
    "Each outbox as the run left it: one claim (limit 100) on the relay's session settings under `EXPLAIN (ANALYZE, BUFFERS)`, rolled back; its dead and live rows (pg_stat_user_tables) and the claim indexes' sizes.",
    '',
    ...markdownTableLinesOf(outboxes, {
      database: (o) => o.database,
      'claim ms': (o) => o.claimExecutionMs,
      'claim buffers': (o) => o.claimSharedBlocks,
      'live rows': (o) => o.liveRows,
      'dead rows': (o) => o.deadRows,
      'claimable index KiB': (o) => o.claimableIndexKiB,
      'aggregate index KiB': (o) => o.aggregateIndexKiB,
    }),
    '',
    ...outboxes.map((o) => `- ${o.database}'s claim plan: ${o.claimPlan}`),
    '',
    ...(requests ? brokerRequestsLines(requests) : []),
    ...Object.entries(profiles).flatMap(([name, shares]) => [
      `${name}'s main thread in the load window (\`--cpu-prof\`): ${msPerOrder(shares.busyMs)} ms busy per order, ` +
        `of which socket writes ${msPerOrder(shares.socketWritesMs)} ms (${percent(shares.socketWritesMs, shares.busyMs)}); ` +
        `/proc counted ${cpuMsPerOrder[name]} ms of CPU per order and ${waitMsPerOrder[name]} ms waiting for a core. ` +
        'Samples are taken on the wall clock, so a wait for a core lands on whatever was on the stack when the thread lost it.',
      '',
      ...markdownTableLinesOf(shares.parts, {
        'part (the first library on the stack)': (p) => p.part,
        'ms per order': (p) => msPerOrder(p.ms),
        'share of busy': (p) => percent(p.ms, shares.busyMs),
      }),
      '',
    ]),
  ].join('\n');
  bench.write(report, markdown, receiver ? 'on (every span to an OTLP receiver)' : 'off');
} finally {
  await stack.stop();
  await receiver?.close();
  await dispose();
}
process.exit(0);

function percent(part: number, whole: number): string {
  return `${Math.round((100 * part) / Math.max(whole, Number.EPSILON))}%`;
}
