// How often the orders service locks an order row to record inventory's and billing's replies:
// the whole system as processes (the chaos suite's stack, as bench:where-time-goes starts it), a
// fixed set of orders placed at a steady rate, and, once every one of them is decided, what
// pg_stat_statements says of the reply consumer's lock statement over exactly those orders:
//   - calls per order (statements; several orders share a call when their replies share a chunk);
//   - rows per order, i.e. how many times each order row was locked: 2 when the two replies of an
//     order land in two transactions, 1 when they land in one;
//   - the reply consumer's transactions per order (its processed_events inserts, one per chunk).
// Counts, not times: the machine's load moves how replies meet in chunks, not what a chunk costs.
//
//   node bench/reply-locks.ts [--help]
//
// Needs a server that loads pg_stat_statements (TEST_POSTGRES_URL): `shared_preload_libraries =
// pg_stat_statements`, restarted; the bench creates the extension. docs/performance.md, "One lock
// per order", shows how we used it.
import { setTimeout as sleep } from 'node:timers/promises';
import { startChaosStack } from '@outbox/chaos';
import { markdownTableLines } from '@outbox/devstack/table';
import { startTestBroker } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { collectOutcome, runLoad } from '@outbox/loadgen';
import { defineBench, env, number } from './support/bench.ts';
import { type MachineInfo, machineInfo } from './support/environment.ts';
import { STACK_PROCESSES as PROCESSES, postgresUrl, stackDatabaseUrls } from './support/stack.ts';
import { statementsAvailable } from './where-time-goes/outboxState.ts';

const bench = defineBench({
  name: 'reply-locks',
  about: "How often the orders service locks an order row to record inventory's and billing's replies.",
  options: {
    rate: number(20, 'orders/s'),
    orders: number(400, 'orders placed'),
    // KAFKA_CHUNK_LINGER_MS=0: each partition's chunk in its own transaction, as before the linger.
    env: env('KEY=VALUE for every process of the stack, repeatable (KAFKA_CHUNK_LINGER_MS=0, say)'),
  },
});
const { rate, orders } = bench.args;
const log = bench.log;

/** What this bench writes (`<out>.json`, beside the run record writeResults adds). */
export type ReplyLocks = {
  date: string;
  machine: MachineInfo;
  rate: number;
  env: Record<string, string>;
  accepted: number;
  /** Orders the stack holds and what the reply consumer's statements did for them, in all and per order. */
  counts: {
    orders: number;
    answered: number;
    decided: number;
    lockCalls: number;
    lockRows: number;
    replyTransactions: number;
    lockCallsPerOrder: number;
    lockRowsPerOrder: number;
    replyTransactionsPerOrder: number;
  };
  finalStates: Record<string, number>;
  settled: boolean;
};

await queryOnce(postgresUrl, 'create extension if not exists pg_stat_statements');
if (!(await statementsAvailable()))
  throw new Error(
    `pg_stat_statements is not loaded at ${new URL(postgresUrl).host}: see the header of this file`,
  );

const extraEnv = bench.args.env;
const { broker, dispose } = await startTestBroker('reply-locks');
// A stack that does not come up (a starved machine misses its health deadline) stops the broker too.
const stack = await startChaosStack({
  label: 'rlk',
  kafkaBrokers: broker.brokers,
  postgresUrl,
  env: Object.fromEntries(
    PROCESSES.map((name) => [
      name,
      { ...extraEnv, ...(name === 'billing' ? { PAYMENT_LIMIT_CENTS: '100000000000' } : {}) },
    ]),
  ),
}).catch(async (err: unknown) => {
  await dispose();
  throw err;
});
try {
  await queryOnce(stack.databases.inventory.url, 'update stock set available = 1000000000');
  await queryOnce(postgresUrl, 'select pg_stat_statements_reset()');
  log(`${orders} orders at ${rate} orders/s`);
  const load = await runLoad({
    ordersUrl: stack.process('orders').url,
    rate,
    durationMs: (orders / rate) * 1000,
    mix: { valid: 100 },
    concurrency: 256,
  });
  const orderIds = load.orders.flatMap((order) => (order.orderId ? [order.orderId] : []));
  const outcome = await collectOutcome({
    databaseUrls: stackDatabaseUrls(stack),
    orderIds,
    timeoutMs: 120_000,
  });
  // Only the reply consumer locks orders `for update` by a list of ids and inserts into processed_events.
  const statements = await queryOnce<{ kind: string; calls: number; rows: number }>(
    postgresUrl,
    `select case when s.query like '%from orders where id = any%for update%' then 'lock'
                 else 'dedup' end as kind, sum(s.calls)::int as calls, sum(s.rows)::int as rows
       from pg_stat_statements s join pg_database d on d.oid = s.dbid
      where d.datname = $1
        and (s.query like '%from orders where id = any%for update%'
             or s.query like 'insert into processed_events%')
      group by 1`,
    [stack.databases.orders.name],
  );
  // Every order the stack holds, not only those whose answer reached the load generator: on a
  // starved machine a request can time out at the client after its order committed, and that
  // order's replies lock its row all the same.
  const heldOrders = () =>
    queryOnce<{ n: number; decided: number }>(
      stack.databases.orders.url,
      `select count(*)::int as n, count(*) filter (where status <> 'PENDING')::int as decided from orders`,
    ).then((rows) => rows[0]);
  let held = await heldOrders();
  for (const until = Date.now() + 120_000; held && held.decided < held.n && Date.now() < until; ) {
    await sleep(1_000);
    held = await heldOrders();
  }
  const stored = held?.n ?? orderIds.length;
  const of = (kind: string) => statements.find((s) => s.kind === kind) ?? { calls: 0, rows: 0 };
  const perOrder = (n: number) => Number((n / Math.max(1, stored)).toFixed(2));
  const lock = of('lock');
  const counts: ReplyLocks['counts'] = {
    orders: stored,
    answered: orderIds.length,
    decided: held?.decided ?? 0,
    lockCalls: lock.calls,
    lockRows: lock.rows,
    replyTransactions: of('dedup').calls,
    lockCallsPerOrder: perOrder(lock.calls),
    lockRowsPerOrder: perOrder(lock.rows),
    replyTransactionsPerOrder: perOrder(of('dedup').calls),
  };
  const report: ReplyLocks = {
    date: new Date().toISOString(),
    machine: machineInfo(),
    rate,
    env: extraEnv,
    accepted: load.accepted,
    counts,
    finalStates: outcome.finalStates,
    settled: outcome.settled,
  };
  const envText = Object.entries(extraEnv)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  const markdown = [
    '# Reply locks per order',
    '',
    `Run ${report.date}; ${JSON.stringify(report.machine)}; ${stored} orders placed at ${rate} orders/s` +
      `${envText ? `; extra environment \`${envText}\`` : '; as configured'}; ${counts.decided} decided, ${orderIds.length} answered` +
      ` (${JSON.stringify(outcome.finalStates)}).`,
    '',
    ...markdownTableLines(
      ['orders', 'lock calls per order', 'order rows locked per order', 'reply transactions per order'],
      [
        [
          counts.orders,
          counts.lockCallsPerOrder,
          counts.lockRowsPerOrder,
          counts.replyTransactionsPerOrder,
        ].map(String),
      ],
    ),
  ].join('\n');
  bench.write(report, markdown, 'off');
} finally {
  await stack.stop();
  await dispose();
}
process.exit(0);
