// The claim query against an outbox that is mostly published rows: its plan must stay on the
// partial indexes (outbox_claimable_idx for the candidates, outbox_aggregate_idx for the
// head-of-aggregate check, whether written as NOT EXISTS or as min(seq)), never scan the table,
// and claim in a few milliseconds. bench/retention.ts measures the same at 0.1–2 million rows
// (docs/benchmarks.md, "Retention and the claim query at scale").

import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { claimBatch } from '@outbox/outbox';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

const PUBLISHED = 200_000;
const PENDING_AGGREGATES = 200;
const PENDING_PER_AGGREGATE = 2;
const LIMIT = 100;

let db: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  db = await createOutboxDatabase('events_claim_plan');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query('alter table outbox disable trigger outbox_notify_after_insert');
  // Published history: four events per order, published long ago (one statement, ~200k rows).
  await client.query(
    `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload,
                         status, attempts, created_at, published_at)
     select gen_random_uuid(), '/orders', 'order', 'order-' || (n / 4)::text, 'ORDER_CREATED', 1,
            jsonb_build_object('orderId', 'order-' || (n / 4)::text, 'currency', 'EUR', 'totalCents', '1999'),
            'published', 1, now() - interval '3 days' + n * interval '1 second',
            now() - interval '3 days' + n * interval '1 second'
       from generate_series(1, $1::int) as n`,
    [PUBLISHED],
  );
  // Due work: PENDING_PER_AGGREGATE pending events for each of PENDING_AGGREGATES aggregates.
  await client.query(
    `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
     select gen_random_uuid(), '/orders', 'order', 'pending-' || (n % $1::int)::text, 'ORDER_CREATED', 1,
            '{"currency":"EUR"}'::jsonb
       from generate_series(0, $1::int * $2::int - 1) as n`,
    [PENDING_AGGREGATES, PENDING_PER_AGGREGATE],
  );
  // Two aggregates whose earlier event is not published: a dead-lettered one and one leased by
  // a live relay. Their later pending events must be held back.
  await client.query(
    `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload,
                         status, lease_owner, lease_expires_at, created_at)
     values (gen_random_uuid(), '/orders', 'order', 'blocked-failed', 'ORDER_CREATED', 1, '{}', 'failed',
             null, null, now() - interval '1 hour'),
            (gen_random_uuid(), '/orders', 'order', 'blocked-leased', 'ORDER_CREATED', 1, '{}', 'in_flight',
             'other-relay', now() + interval '1 hour', now() - interval '1 minute')`,
  );
  await client.query(
    `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
     select gen_random_uuid(), '/orders', 'order', a, 'ORDER_CREATED', 1, '{}'
       from unnest(array['blocked-failed', 'blocked-leased']) as a`,
  );
  await client.query('alter table outbox enable trigger outbox_notify_after_insert');
  await client.query('vacuum analyze outbox');
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

/** The claim statement exactly as claimBatch sends it: captured from a call, not copied. */
async function claimSql(): Promise<{ name?: string; text: string }> {
  let sent: { name?: string; text: string } = { text: '' };
  const recorder = {
    query: async (query: string | { name?: string; text: string }) => {
      sent = typeof query === 'string' ? { text: query } : query;
      return { rows: [], rowCount: 0 };
    },
  };
  await claimBatch(recorder as unknown as pg.ClientBase, 'capture', 1, 1);
  return sent;
}

type PlanNode = {
  'Node Type': string;
  'Relation Name'?: string;
  Alias?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
};
type Scan = { node: string; relation?: string; alias?: string; index?: string };

/**
 * Every scan in the plan; a Bitmap Index Scan takes the alias of the Bitmap Heap Scan above it.
 * EXPLAIN renames an alias used twice in a statement (`o` in the CTE becomes `o_1`).
 */
function scans(node: PlanNode, parentAlias?: string, out: Scan[] = []): Scan[] {
  const alias = node.Alias ?? parentAlias;
  if (node['Node Type'].includes('Scan')) {
    out.push({ node: node['Node Type'], relation: node['Relation Name'], alias, index: node['Index Name'] });
  }
  for (const child of node.Plans ?? []) scans(child, alias, out);
  return out;
}

/**
 * The plan of the claim as PostgreSQL would run it: `custom` plans with the parameters' values
 * (an unnamed statement, and a prepared one's first executions), `generic` the plan a named
 * prepared statement may settle on, made without them (so `limit $3` is an unknown number).
 */
async function claimPlan(mode: 'custom' | 'generic'): Promise<PlanNode> {
  const { text } = await claimSql();
  expect(text).toMatch(/\bfrom outbox o\b/);
  const params = ['plan-test', 30_000, LIMIT, []];
  if (mode === 'custom') {
    const { rows } = await client.query(`explain (format json) ${text}`, params);
    return (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]?.Plan as PlanNode;
  }
  await client.query('begin');
  try {
    await client.query(`set local plan_cache_mode = force_generic_plan`);
    await client.query(`prepare claim_plan_probe (text, int, int, uuid[]) as ${text}`);
    const { rows } = await client.query(
      `explain (format json) execute claim_plan_probe ('plan-test', 30000, ${LIMIT}, '{}')`,
    );
    return (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]?.Plan as PlanNode;
  } finally {
    await client.query('rollback');
    await client.query('deallocate all');
  }
}

describe('the claim query on an outbox of 200,000 published rows', () => {
  it('is sent as a named prepared statement', async () => {
    expect((await claimSql()).name).toBe('outbox_claim');
  });

  it.each(['custom', 'generic'] as const)(
    'plans on the partial indexes, with no sequential scan of the outbox (%s plan)',
    async (mode) => {
      const plan = await claimPlan(mode);
      const all = scans(plan);
      const describeScans = all.map((s) => `${s.node} ${s.index ?? ''} ${s.relation ?? ''} ${s.alias ?? ''}`);

      expect(
        all.filter((s) => s.node === 'Seq Scan' && s.relation === 'outbox'),
        describeScans.join('\n'),
      ).toEqual([]);
      // Candidates come from the claimable index, in seq order.
      expect(
        all.some((s) => /^o(_\d+)?$/.test(s.alias ?? '') && s.index === 'outbox_claimable_idx'),
        describeScans.join('\n'),
      ).toBe(true);
      // The head-of-aggregate check probes the aggregate index (unpublished rows only), on the
      // other reference to outbox than the candidates'.
      expect(
        all.some((s) => !/^o(_\d+)?$/.test(s.alias ?? '') && s.index === 'outbox_aggregate_idx'),
        describeScans.join('\n'),
      ).toBe(true);
    },
  );

  it('claims a full batch of aggregate heads in well under 50 ms', async () => {
    const timings: number[] = [];
    let claimed: Awaited<ReturnType<typeof claimBatch>> = [];
    for (let i = 0; i < 7; i++) {
      // Rolled back, so every run claims from the same state.
      await client.query('begin');
      const start = performance.now();
      claimed = await claimBatch(client, 'plan-test', 30_000, LIMIT);
      timings.push(performance.now() - start);
      await client.query('rollback');
    }
    timings.sort((a, b) => a - b);
    const medianMs = timings[Math.floor(timings.length / 2)] as number;
    expect(medianMs, `claim timings ms: ${timings.map((t) => t.toFixed(1)).join(', ')}`).toBeLessThan(50);

    expect(claimed).toHaveLength(LIMIT);
    // One event per aggregate, each the first of its aggregate; the blocked ones never.
    const aggregates = claimed.map((row) => row.aggregate_id);
    expect(new Set(aggregates).size).toBe(LIMIT);
    expect(aggregates.filter((a) => a.startsWith('blocked-'))).toEqual([]);
    const heads = await client.query<{ id: string }>(
      `select distinct on (aggregate_id) id from outbox
        where aggregate_id like 'pending-%' order by aggregate_id, seq`,
    );
    const headIds = new Set(heads.rows.map((row) => row.id));
    expect(claimed.every((row) => headIds.has(row.id))).toBe(true);
  });
});
