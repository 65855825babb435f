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
// --reply-locks: once every order of the window is decided, how often the orders service locked an
// order row to record inventory's and billing's replies (where-time-goes/replyLocks.ts; needs
// pg_stat_statements). The statements and transactions are then read after that wait: they cover it too.
// docs/performance.md, "One lock per order", shows how we used it.
//
// Not a capacity search (that is bench:system): one rate, so two revisions can be compared
// statement by statement. docs/performance.md shows how we used it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startChaosStack } from '@outbox/chaos';
import { startOtlpReceiver, tracingEnvForStack } from '@outbox/devstack/testing/otlp-receiver';
import { startTestBroker } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { collectOutcome, runLoad } from '@outbox/loadgen';
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
import { type ProfileShares, profileShares, readProfiles } from './support/cpuProfile.ts';
import { machineInfo } from './support/environment.ts';
import {
  backendPids,
  STACK_PROCESSES as PROCESSES,
  postgresUrl,
  stackDatabaseUrls,
} from './support/stack.ts';
import { brokerRequests, logOffset, requestLogJvmOptions } from './where-time-goes/brokerRequests.ts';
import {
  familiesPerOrder,
  statementFamilySql,
  transactionsPerOrder,
  transactionsSoFar,
} from './where-time-goes/counts.ts';
import { outboxState, statementsAvailable } from './where-time-goes/outboxState.ts';
import { postgresClients } from './where-time-goes/postgresClients.ts';
import { databaseNow, replyLockCounts } from './where-time-goes/replyLocks.ts';
import { markdownReport, type Statement, type WhereTimeGoes } from './where-time-goes/report.ts';

/** What this bench writes, read by the figures. */
export type { ReplyLocks, WhereTimeGoes } from './where-time-goes/report.ts';

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
    replyLocks: flag(
      "once every order of the window is decided, count the reply consumer's order-row locks per order",
    ),
  },
});
const { args } = bench;
const { rate, seconds } = args;
const log = bench.log;

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
// Nothing refused: billing's payment limit out of reach.
const stackEnv = Object.fromEntries(
  PROCESSES.map((name) => [
    name,
    {
      ...tracingEnv[name],
      ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
      ...args.env,
      ...(name === 'billing' ? { PAYMENT_LIMIT_CENTS: '100000000000' } : {}),
    },
  ]),
);
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
  if (args.replyLocks && !withStatements)
    throw new Error(
      '--reply-locks counts with pg_stat_statements: load it and `create extension pg_stat_statements`',
    );
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
  const windowFrom = args.replyLocks ? await databaseNow(stack.databases.orders.url) : undefined;
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
  const orderIds = load.orders.flatMap((order) => (order.orderId ? [order.orderId] : []));
  const rss = Object.fromEntries(
    Object.entries(pids)
      .filter(([name]) => name !== 'postgres')
      .map(([name, [pid]]) => [name, rssMiB(pid as number)]),
  );
  // Before the statements are read, so that they hold every reply to the window's orders.
  const counts = windowFrom && (await replyLockCounts(stack.databases.orders, windowFrom, orderIds.length));
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
    orderIds,
    timeoutMs: 30_000,
  });
  const profiles = profileDir ? await profilesOf(stack, profileDir, window) : {};
  const report: WhereTimeGoes = {
    date: new Date().toISOString(),
    machine: machineInfo(),
    warmup,
    tracing: args.tracing,
    nodeOptions,
    env: args.env,
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
    ...(counts ? { counts } : {}),
  };
  bench.write(
    report,
    markdownReport(report, withStatements),
    receiver ? 'on (every span to an OTLP receiver)' : 'off',
  );
} finally {
  await stack.stop();
  await receiver?.close();
  await dispose();
}
process.exit(0);

/** Each Node process's profile, written when it exits: the processes are stopped here for that. */
async function profilesOf(
  stack: Awaited<ReturnType<typeof startChaosStack>>,
  dir: string,
  window: { fromUs: number; toUs: number },
): Promise<Record<string, ProfileShares>> {
  const pidOf = new Map(PROCESSES.map((name) => [stack.process(name).pid, name]));
  await Promise.all(PROCESSES.map((name) => stack.process(name).stop()));
  const shares: Record<string, ProfileShares> = {};
  for (const [pid, profile] of readProfiles(dir)) {
    const name = pidOf.get(pid);
    if (name) shares[name] = profileShares(profile, window);
  }
  log(`profiles in ${dir} (Chrome DevTools and speedscope open them)`);
  return shares;
}
