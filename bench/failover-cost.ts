/**
 * What each way of announcing only what a failover cannot take back costs, on a real primary and
 * streaming standby (tools/devstack/src/postgresPair.ts, both on this machine):
 *
 * - async replication, nothing waits: the baseline (and the ghost of chaos postgres-failover-async-unguarded);
 * - async + DATABASE_WAIT_FOR_STANDBY: writes as fast as async; the relay waits before each publish
 *   (and a consumer before each offset commit) until the standby flushed the WAL up to then;
 * - sync replication (synchronous_standby_names): every commit waits for the standby's flush.
 *
 *   node bench/failover-cost.ts [--help]
 *
 * Writers: `concurrency` clients each commit, back to back, one transaction shaped like an order's
 * (an order row, its item rows and an outbox row: three inserts). Measured: commits per second and
 * commit latency. Beside them, in the async runs, a relay-like loop calls the real StandbyWait
 * (packages/runtime/src/standbyWait.ts) every 10 ms and records how long each wait took: the
 * latency a batch gains before its publish. Both pairs run side by side and the modes take turns,
 * `seconds` each, in an order that rotates every round, so that the machine's load (shared, and
 * changing by the minute) falls on all three alike; the report gives each round and the medians.
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */

import { type PostgresPair, type Replication, startPostgresPair } from '@outbox/devstack/postgres-pair';
import { markdownTableLinesOf } from '@outbox/devstack/table';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import { StandbyWait } from '@outbox/runtime/standby-wait';
import pg from 'pg';
import { defineBench, int } from './support/bench.ts';
import { loadavg, machineInfo } from './support/environment.ts';
import { quantile, round } from './support/stats.ts';

const bench = defineBench({
  name: 'failover-cost',
  about:
    'What each way of announcing only what a failover cannot take back costs: async, async + standby ' +
    'wait, sync replication, on a real primary and standby.',
  options: {
    seconds: int(5, 'seconds per mode per round'),
    rounds: int(6, 'rounds; the modes take turns in an order that rotates every round'),
    concurrency: int(8, 'writers committing order-shaped transactions'),
  },
});
const { seconds, rounds, concurrency } = bench.args;
const params = { seconds, rounds, concurrency };
const log = bench.log;

type Mode = { key: 'async' | 'async+wait' | 'sync'; replication: Replication; wait: boolean };
const MODES: Mode[] = [
  { key: 'async', replication: 'async', wait: false },
  { key: 'async+wait', replication: 'async', wait: true },
  { key: 'sync', replication: 'sync', wait: false },
];

type Latencies = { p50: number; p95: number; p99: number; max: number; count: number };
type ModeResult = {
  mode: Mode['key'];
  round: number;
  commitsPerSecond: number;
  commitMs: Latencies;
  /** async+wait only: how long each wait for the standby took. */
  standbyWaitMs?: Latencies;
  loadavg: number[];
};

const summary = (xs: number[]): Latencies => ({
  p50: round(quantile(xs, 0.5), 2),
  p95: round(quantile(xs, 0.95), 2),
  p99: round(quantile(xs, 0.99), 2),
  max: round(Math.max(...xs), 2),
  count: xs.length,
});

const SCHEMA = `
  create table orders (id bigserial primary key, customer text not null, created_at timestamptz default now());
  create table order_items (order_id bigint not null, sku text not null, quantity int not null);
  create table outbox (id bigserial primary key, aggregate_id bigint not null, payload jsonb not null)`;

async function measure(pair: PostgresPair, mode: Mode, turn: number): Promise<ModeResult> {
  const pool = new pg.Pool({ connectionString: pair.url, max: params.concurrency + 2 });
  const commitMs: number[] = [];
  const waitMs: number[] = [];
  const deadline = Date.now() + params.seconds * 1000;
  const writer = async () => {
    const client = await pool.connect();
    try {
      while (Date.now() < deadline) {
        const started = performance.now();
        await client.query('begin');
        const { rows } = await client.query<{ id: string }>(
          `insert into orders (customer) values ('bench') returning id`,
        );
        const id = rows[0]?.id;
        await client.query(`insert into order_items values ($1, 'KB-101', 1), ($1, 'MS-202', 2)`, [id]);
        await client.query(
          `insert into outbox (aggregate_id, payload) values ($1, '{"type":"ORDER_CREATED"}')`,
          [id],
        );
        await client.query('commit');
        commitMs.push(performance.now() - started);
      }
    } finally {
      client.release();
    }
  };
  const relayLike = async () => {
    const wait = new StandbyWait({
      pool,
      standby: 'standby',
      timeoutMs: 5_000,
      registry: createMetricsRegistry('bench'),
    });
    while (Date.now() < deadline) {
      const started = performance.now();
      await wait.untilStandbyHolds();
      waitMs.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  await Promise.all([
    ...Array.from({ length: params.concurrency }, writer),
    ...(mode.wait ? [relayLike()] : []),
  ]);
  await pool.end();
  return {
    mode: mode.key,
    round: turn,
    commitsPerSecond: round(commitMs.length / params.seconds, 1),
    commitMs: summary(commitMs),
    ...(mode.wait ? { standbyWaitMs: summary(waitMs) } : {}),
    loadavg: loadavg(),
  };
}

const results: ModeResult[] = [];
const pairs = new Map<Replication, PostgresPair>();
try {
  for (const replication of ['async', 'sync'] as const) {
    log(`starting a primary and standby (${replication})`);
    const pair = await startPostgresPair({ label: `bench-${replication}`, replication });
    pairs.set(replication, pair);
    const admin = new pg.Client({ connectionString: pair.url });
    await admin.connect();
    await admin.query(SCHEMA);
    await admin.end();
  }
  for (let round = 1; round <= params.rounds; round++) {
    for (let i = 0; i < MODES.length; i++) {
      const mode = MODES[(i + round) % MODES.length] as Mode;
      const pair = pairs.get(mode.replication) as PostgresPair;
      log(`round ${round}: ${mode.key}, ${params.concurrency} writers for ${params.seconds} s`);
      results.push(await measure(pair, mode, round));
    }
  }
} finally {
  for (const pair of pairs.values()) await pair.remove();
}

const med = (xs: number[]) => round(quantile(xs, 0.5), 2);
const medians = MODES.map((mode) => {
  const of = results.filter((r) => r.mode === mode.key);
  return {
    mode: mode.key,
    commitsPerSecond: med(of.map((r) => r.commitsPerSecond)),
    commitMsP50: med(of.map((r) => r.commitMs.p50)),
    commitMsP99: med(of.map((r) => r.commitMs.p99)),
    ...(mode.wait
      ? {
          standbyWaitMsP50: med(of.map((r) => r.standbyWaitMs?.p50 ?? 0)),
          standbyWaitMsP99: med(of.map((r) => r.standbyWaitMs?.p99 ?? 0)),
        }
      : {}),
  };
});

const ms = (l: Latencies | undefined) => (l ? `${l.p50} / ${l.p99}` : '–');
const markdown = [
  '# What announcing only what a failover keeps costs: async, async + standby wait, sync',
  '',
  `${new Date().toISOString()}, ${machineInfo().cpus} cores, Node ${process.version}, PostgreSQL 15 primary and`,
  'streaming standby on the same machine (bench/failover-cost.ts; fsync on). Each run: a fresh pair per',
  `replication mode side by side, ${params.concurrency} writers committing order-shaped transactions, the modes taking`,
  `turns for ${params.seconds} s each over ${params.rounds} rounds; in async+wait a relay-like loop waits for the standby every`,
  '10 ms (the real StandbyWait). Medians over the rounds:',
  '',
  ...markdownTableLinesOf(medians, {
    mode: (m) => m.mode,
    'commits/s': (m) => m.commitsPerSecond,
    'commit ms p50': (m) => m.commitMsP50,
    'commit ms p99': (m) => m.commitMsP99,
    'standby wait ms p50': (m) => m.standbyWaitMsP50 ?? '–',
    'standby wait ms p99': (m) => m.standbyWaitMsP99 ?? '–',
  }),
  '',
  'Each round:',
  '',
  ...markdownTableLinesOf(results, {
    round: (r) => r.round,
    mode: (r) => r.mode,
    'commits/s': (r) => r.commitsPerSecond,
    'commit ms p50 / p99': (r) => ms(r.commitMs),
    'commit ms p95': (r) => r.commitMs.p95,
    'standby wait ms p50 / p99': (r) => ms(r.standbyWaitMs),
    'load average (1/5/15 min)': (r) => r.loadavg.join(' / '),
  }),
  '',
].join('\n');
bench.write({ params, machine: machineInfo(), results }, markdown, 'off');
