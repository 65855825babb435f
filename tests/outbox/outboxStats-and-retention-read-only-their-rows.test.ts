// The statements that run every few seconds whatever the load read only the rows they are about,
// never the whole outbox, which is mostly published rows waiting for retention: the console's
// outbox card and the relay's metrics (outboxStats: unpublished rows, through a partial index) in
// both relay modes (in debezium mode the relay marks rows published too, so the same holds), and
// the retention sweep's candidates (deletePublished: published rows past the retention, through
// outbox_published_at_idx), also when none are due. Checked with EXPLAIN (ANALYZE, BUFFERS) on an
// outbox of 200,000 rows, vacuumed and analyzed as autovacuum would leave it.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { outboxSql } from '@outbox/outbox';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

const ROWS = 200_000;
const UNPUBLISHED = 1_000;
/** One published row every 3 s: the oldest is ~6.9 days old. */
const SPACING_SECONDS = 3;
const DAY_MS = 86_400_000;

type PlanNode = {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
};
const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

let db: TestDatabase;
let client: pg.Client;
let tablePages: number;

beforeAll(async () => {
  db = await createOutboxDatabase('outbox_stats_retention_plans');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(
    `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload,
                         status, published_at, created_at)
     select gen_random_uuid(), '/orders', 'order', 'order-' || (n % 50000), 'ORDER_CREATED', 1,
            '{"orderId":"o","totalCents":"1999"}'::jsonb,
            case when n > $1::int - $2::int then 'pending' else 'published' end,
            case when n > $1::int - $2::int then null else now() - make_interval(secs => ($1::int - n) * $3::int) end,
            now() - make_interval(secs => ($1::int - n) * $3::int)
       from generate_series(1, $1::int) as n`,
    [ROWS, UNPUBLISHED, SPACING_SECONDS],
  );
  await client.query('vacuum analyze outbox');
  tablePages = (
    await client.query<{ pages: number }>(`select relpages as pages from pg_class where relname = 'outbox'`)
  ).rows[0]?.pages as number;
}, 120_000);

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

/** EXPLAIN (ANALYZE, BUFFERS) inside a transaction rolled back: the sweep's delete deletes nothing. */
async function explain(sql: string, values: unknown[]) {
  await client.query('begin');
  try {
    const { rows } = await client.query(`explain (analyze, buffers, format json) ${sql}`, values);
    const plan = (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]?.Plan as PlanNode;
    const steps = nodes(plan).map((n) =>
      `${n['Node Type']} ${n['Index Name'] ?? n['Relation Name'] ?? ''}`.trim(),
    );
    const read = (node: PlanNode) => node['Shared Hit Blocks'] + node['Shared Read Blocks'];
    const finding = nodes(plan).find((n) => n['Node Type'] === 'LockRows');
    return { steps, buffers: read(plan), candidateBuffers: finding ? read(finding) : undefined };
  } finally {
    await client.query('rollback');
  }
}

describe(`an outbox of ${ROWS.toLocaleString('en')} rows, ${UNPUBLISHED} of them unpublished`, () => {
  it('is thousands of pages, so a scan of it would show', () => {
    expect(tablePages).toBeGreaterThan(1_000);
  });

  it('outboxStats (the console card, the relay metrics) reads the unpublished rows only', async () => {
    const { steps, buffers } = await explain(outboxSql.stats, []);
    expect(steps, steps.join(' > ')).not.toContain('Seq Scan outbox');
    expect(buffers, steps.join(' > ')).toBeLessThan(tablePages / 10);
  });

  it('the retention sweep with nothing due finds that out from its index', async () => {
    const { steps, buffers } = await explain(outboxSql.deletePublished, [30 * DAY_MS, 1_000]);
    expect(steps, steps.join(' > ')).toContain('Index Scan outbox_published_at_idx');
    expect(buffers, steps.join(' > ')).toBeLessThan(20);
  });

  it('the retention sweep with rows due finds its batch without reading the table', async () => {
    const { steps, candidateBuffers } = await explain(outboxSql.deletePublished, [5 * DAY_MS, 1_000]);
    expect(steps, steps.join(' > ')).not.toContain('Seq Scan outbox');
    // Finding and locking 1,000 candidates: their index entries and heap pages, not the table's.
    expect(candidateBuffers, steps.join(' > ')).toBeLessThan(tablePages / 2);
  });
});
