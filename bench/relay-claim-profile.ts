/**
 * Where a relay's claim and mark spend their time on a backlog (docs/performance.md, "The relay
 * beside Debezium"): EXPLAIN (ANALYZE, BUFFERS) of the production claim and mark, on the relay's
 * session settings, for a backlog of --events rows over each --aggregates count, with claims of
 * each --limits size: the first claim of the backlog, the pipelined claim made with that batch in
 * hand, and the mark of the first batch. Every statement runs in a transaction rolled back, so
 * each starts from the same outbox.
 *
 *   node bench/relay-claim-profile.ts [--help]
 *
 * Not a test: it prints a table and writes <out>.json and <out>.md.
 */
import { markdownTableLinesOf } from '@outbox/devstack/table';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { OUTBOX_SESSION_OPTIONS, outboxSql } from '@outbox/outbox';
import pg from 'pg';
import { insertEventsSql } from './relay/backlog.ts';
import { defineBench, int, ints } from './support/bench.ts';
import { median, round } from './support/stats.ts';
import { type ExplainRoot, planOutline } from './where-time-goes/outboxState.ts';

const bench = defineBench({
  name: 'relay-claim-profile',
  about:
    "EXPLAIN (ANALYZE, BUFFERS) of the relay's claim and mark on a backlog, per aggregate count and claim size.",
  options: {
    events: int(20000, 'the backlog'),
    aggregates: ints('50,2000', 'aggregate counts the backlog is spread over'),
    limits: ints('100,1000', 'claim sizes'),
    repeats: int(5, 'runs of each statement (the median is reported)'),
  },
});
const { events, aggregates: aggregateCounts, limits, repeats } = bench.args;
const log = bench.log;
const OWNER = 'profile-relay';

type Row = {
  aggregates: number;
  limit: number;
  statement: 'first claim' | 'claim with a batch in hand' | 'mark the first batch';
  rows: number;
  executionMs: number;
  sharedBlocks: number;
  plan: string;
};

const db = await createOutboxDatabase('bench_claim_profile');
const client = new pg.Client({ connectionString: db.url, options: OUTBOX_SESSION_OPTIONS });
await client.connect();
const results: Row[] = [];

const blocks = (node: ExplainRoot['Plan']): number => node['Shared Hit Blocks'] + node['Shared Read Blocks'];

async function explain(sql: string, values: unknown[]): Promise<{ root: ExplainRoot; rows: number }> {
  const { rows } = await client.query<{ 'QUERY PLAN': ExplainRoot[] }>(
    `explain (analyze, buffers, format json) ${sql}`,
    values,
  );
  const root = rows[0]?.['QUERY PLAN'][0] as ExplainRoot;
  return { root, rows: (root.Plan as unknown as { 'Actual Rows': number })['Actual Rows'] };
}

/** `repeats` times in a rolled-back transaction; the median run by execution time. */
async function measure(
  aggregates: number,
  limit: number,
  statement: Row['statement'],
  run: () => Promise<{ root: ExplainRoot; rows: number }>,
): Promise<void> {
  const runs: { root: ExplainRoot; rows: number }[] = [];
  for (let i = 0; i < repeats; i++) {
    await client.query('begin');
    try {
      runs.push(await run());
    } finally {
      await client.query('rollback');
    }
  }
  runs.sort((a, b) => a.root['Execution Time'] - b.root['Execution Time']);
  const mid = runs[Math.floor(runs.length / 2)] as { root: ExplainRoot; rows: number };
  results.push({
    aggregates,
    limit,
    statement,
    rows: mid.rows,
    executionMs: round(median(runs.map((r) => r.root['Execution Time'])), 2),
    sharedBlocks: blocks(mid.root.Plan),
    plan: planOutline(mid.root.Plan),
  });
}

const claim = async (limit: number, inHand: string[]) =>
  (await client.query<{ id: string }>(outboxSql.claim, [OWNER, 30_000, limit, inHand])).rows.map(
    (row) => row.id,
  );

try {
  for (const aggregates of aggregateCounts) {
    await client.query('truncate outbox');
    await client.query(insertEventsSql('small'), [events, aggregates, 0, 'agg']);
    await client.query('vacuum analyze outbox');
    for (const limit of limits) {
      log(`${aggregates} aggregates, claims of ${limit}`);
      await measure(aggregates, limit, 'first claim', () =>
        explain(outboxSql.claim, [OWNER, 30_000, limit, []]),
      );
      await measure(aggregates, limit, 'claim with a batch in hand', async () =>
        explain(outboxSql.claim, [OWNER, 30_000, limit, await claim(limit, [])]),
      );
      await measure(aggregates, limit, 'mark the first batch', async () =>
        explain(outboxSql.markPublished, [await claim(limit, []), OWNER]),
      );
    }
  }
} finally {
  await client.end();
  await db.drop();
}

const report = {
  ...(await bench.header(testPostgresUrl)),
  command: bench.command,
  parameters: { events, aggregateCounts, limits, repeats },
  loadavg: bench.load(),
  results,
};
const markdown = [
  '# The relay’s claim and mark on a backlog: EXPLAIN (ANALYZE, BUFFERS)',
  '',
  `${report.date}, ${report.machine.cpus} × ${report.machine.cpuModel}, ${report.postgres.version}, ` +
    `load average ${report.loadavg.before.join(' ')} before, ${report.loadavg.after.join(' ')} after ` +
    `(1, 5, 15 min; the machine is shared). Produced by \`${report.command}\`.`,
  '',
  `A backlog of ${events} pending rows over A aggregates (round-robin), vacuumed and analyzed; the`,
  'relay’s session settings; each statement run ' +
    `${repeats} times in a rolled-back transaction, median execution time; buffers and plan of that run.`,
  '',
  ...markdownTableLinesOf(results, {
    aggregates: (r) => r.aggregates,
    'claim limit': (r) => r.limit,
    statement: (r) => r.statement,
    rows: (r) => r.rows,
    'execution ms': (r) => r.executionMs,
    'shared buffers': (r) => r.sharedBlocks,
    plan: (r) => `\`${r.plan}\``,
  }),
  '',
].join('\n');
bench.write(report, markdown, 'off');
