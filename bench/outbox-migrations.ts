/**
 * Upgrading a live outbox: how long the shared migrations 004 and 005 lock the table, and what the
 * writers and readers beside them see (docs/production.md, "Upgrading a live outbox").
 *
 *   node bench/outbox-migrations.ts [--help]
 *
 * One fresh database with the outbox as 001 made it (its Up section), `--rows` rows of which
 * `--pending` unpublished, vacuumed and analyzed. Then, one after the other, each with a writer
 * inserting one event every 10 ms (as the orders API does) and a reader asking for the newest
 * events every 10 ms (as the console does) on connections of their own:
 *
 *   004 as shipped            create index (share lock: writes wait, reads go on)
 *   004 built concurrently    the same index, create index concurrently (what an operator can run
 *                             before the upgrade; 004 then finds it: `if not exists`)
 *   004 when the index exists the shipped statement with the index already there
 *   005 as shipped            its Up section, one transaction: the column type change rewrites the
 *                             table and its indexes under an access exclusive lock (reads wait too)
 *
 * Each step records its duration, and the longest insert and read that ran beside it. Not a test:
 * it writes <out>.json and <out>.md.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { markdownTableLinesOf } from '@outbox/devstack/table';
import { createTestDatabase, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { outboxMigrationsDir } from '@outbox/outbox';
import pg from 'pg';
import { defineBench, int } from './support/bench.ts';
import { loadavg, machineInfo, type RunHeader } from './support/environment.ts';
import { round } from './support/stats.ts';

const bench = defineBench({
  name: 'outbox-migrations',
  about:
    'Upgrading a live outbox: how long migrations 004 and 005 lock the table, and what writers and readers beside them see.',
  options: {
    rows: int(1000000, 'rows in the outbox'),
    pending: int(1000, 'of which unpublished'),
  },
});
const params = { rows: bench.args.rows, pending: bench.args.pending };
const log = bench.log;
const BESIDE_EVERY_MS = 10;

/** A migration file's Up section, as node-pg-migrate runs it. */
const upSection = (file: string) =>
  readFileSync(join(outboxMigrationsDir, file), 'utf8').split('-- Down Migration')[0] as string;

const INDEX_004 = 'create index outbox_aggregate_id_idx on outbox (aggregate_id, seq)';

const insertEvent = `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers)
  values (gen_random_uuid(), '/orders', 'order', 'live-' || $1::int, 'ORDER_CREATED', 1, '{}'::jsonb,
          '{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}'::jsonb)`;
const newestEvents = 'select id, status from outbox order by seq desc limit 8';

type Beside = { statements: number; longestMs: number };
type Step = { step: string; durationMs: number; writer: Beside; reader: Beside; loadavg: number[] };

/** What this bench writes (outbox-migrations.json, beside the run record writeResults adds). */
export type OutboxMigrations = RunHeader & {
  benchmark: 'outbox-migrations';
  command: string;
  loadavgBefore: number[];
  loadavgAfter: number[];
  parameters: typeof params & { besideEveryMs: number };
  outboxSize: { table: string; total: string } | undefined;
  steps: Step[];
};

/** Run `sql` on `value` every BESIDE_EVERY_MS until stopped, timing each statement. */
function besideLoop(url: string, sql: string, value: () => unknown[]) {
  const client = new pg.Client({ connectionString: url });
  const result: Beside = { statements: 0, longestMs: 0 };
  let running = true;
  const done = (async () => {
    await client.connect();
    while (running) {
      const started = performance.now();
      await client.query(sql, value());
      result.longestMs = Math.max(result.longestMs, performance.now() - started);
      result.statements += 1;
      await new Promise((resolve) => setTimeout(resolve, BESIDE_EVERY_MS));
    }
    await client.end();
  })();
  return {
    async stop(): Promise<Beside> {
      running = false;
      await done;
      return { statements: result.statements, longestMs: round(result.longestMs, 1) };
    },
  };
}

async function measure(url: string, admin: pg.Client, step: string, sql: string): Promise<Step> {
  let n = 0;
  const writer = besideLoop(url, insertEvent, () => {
    n += 1;
    return [n];
  });
  const reader = besideLoop(url, newestEvents, () => []);
  // Both loops running before the migration starts.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = performance.now();
  await admin.query(sql);
  const durationMs = round(performance.now() - started, 0);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const result = {
    step,
    durationMs,
    writer: await writer.stop(),
    reader: await reader.stop(),
    loadavg: loadavg(),
  };
  log(
    `${step}: ${durationMs} ms, longest insert ${result.writer.longestMs} ms, read ${result.reader.longestMs} ms`,
  );
  return result;
}

async function load(admin: pg.Client): Promise<void> {
  await admin.query(upSection('001_outbox.sql'));
  await admin.query(
    `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload,
                         status, published_at, created_at)
     select gen_random_uuid(), '/orders', 'order', 'order-' || (n % 100000), 'ORDER_CREATED', 1,
            jsonb_build_object('orderId', gen_random_uuid()::text, 'customerId', 'customer-' || (n % 1000),
                               'currency', 'EUR', 'totalCents', '1999',
                               'items', jsonb_build_array(jsonb_build_object('sku', 'MS-202', 'quantity', 1))),
            case when n > $1::int - $2::int then 'pending' else 'published' end,
            case when n > $1::int - $2::int then null else now() - make_interval(secs => ($1::int - n) / 10.0) end,
            now() - make_interval(secs => ($1::int - n) / 10.0)
       from generate_series(1, $1::int) as n`,
    [params.rows, params.pending],
  );
  await admin.query('vacuum analyze outbox');
}

const startedAt = new Date();
const loadavgBefore = loadavg();
const db = await createTestDatabase('bench_outbox_migrations');
const admin = new pg.Client({ connectionString: db.url });
let report: OutboxMigrations;
try {
  await admin.connect();
  log(`loading ${params.rows} rows`);
  await load(admin);
  const size = await admin.query<{ table: string; total: string }>(
    `select pg_size_pretty(pg_table_size('outbox')) as table, pg_size_pretty(pg_total_relation_size('outbox')) as total`,
  );
  const steps: Step[] = [];
  steps.push(await measure(db.url, admin, '004 as shipped (create index)', INDEX_004));
  await admin.query('drop index outbox_aggregate_id_idx');
  for (const [step, sql] of [
    [
      '004 built concurrently (before the upgrade)',
      INDEX_004.replace('create index', 'create index concurrently if not exists'),
    ],
    [
      '004 with the index already there (if not exists)',
      INDEX_004.replace('create index', 'create index if not exists'),
    ],
    ['005 as shipped (type change rewrites)', upSection('005_outbox_cdc_columns.sql')],
  ] as const)
    steps.push(await measure(db.url, admin, step, sql));
  report = {
    ...(await bench.header(testPostgresUrl, [
      'shared_buffers',
      'maintenance_work_mem',
      'max_wal_size',
      'autovacuum',
    ])),
    date: startedAt.toISOString(),
    command: `node bench/outbox-migrations.ts --rows ${params.rows} --pending ${params.pending}`,
    loadavgBefore,
    loadavgAfter: loadavg(),
    parameters: { ...params, besideEveryMs: BESIDE_EVERY_MS },
    outboxSize: size.rows[0],
    steps,
  };
} finally {
  await admin.end();
  await db.drop();
}

const steps = report.steps;
const markdown = [
  `# Upgrading a live outbox: migrations 004 and 005 on ${params.rows.toLocaleString('en')} rows`,
  '',
  `${report.date}, ${machineInfo().cpus} cores, ${report.postgres.version} (autovacuum ${report.postgres.autovacuum}), Node ${process.version};`,
  `load average before ${loadavgBefore.join(' / ')}, after ${report.loadavgAfter.join(' / ')} (a shared, busy machine: durations are noisy).`,
  `Command: \`${report.command}\`. The outbox: ${params.rows.toLocaleString('en')} rows (${params.pending} unpublished), table ${report.outboxSize?.table}, with indexes ${report.outboxSize?.total}, vacuumed and analyzed.`,
  `Beside each step a writer inserts one event and a reader reads the newest events, each every ${BESIDE_EVERY_MS} ms on its own connection.`,
  '',
  ...markdownTableLinesOf(steps, {
    step: (s) => s.step,
    'duration ms': (s) => s.durationMs,
    'longest insert beside it ms': (s) => s.writer.longestMs,
    inserts: (s) => s.writer.statements,
    'longest read beside it ms': (s) => s.reader.longestMs,
    reads: (s) => s.reader.statements,
    'load average (1/5/15 min)': (s) => s.loadavg.join(' / '),
  }),
  '',
].join('\n');
bench.write(report, markdown, 'off');
