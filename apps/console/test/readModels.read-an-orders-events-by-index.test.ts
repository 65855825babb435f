// The console's reads of one order's events (its timeline, and in the orders list the trace id of
// each order's ORDER_CREATED and whether a pending order has one) look the outbox up by
// aggregate_id, published rows included. Only a partial index of unpublished rows had that column,
// so every read scanned the whole outbox: each open tab, every second, until the reads timed out.
// Their plans, on an outbox of mostly published rows, must use an index, never scan
// the table; as tests/outbox/claimBatch.uses-the-pending-index.test.ts checks the claim's.
import { randomUUID } from 'node:crypto';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withOrderCreatedSql } from '../src/readModels/dualWriteAnomalies.ts';
import { traceparentsSql } from '../src/readModels/orders.ts';
import { orderEventsSql } from '../src/readModels/orderTimeline.ts';

useLeakGuard();

const PUBLISHED_ORDERS = 50_000; // three published events each
const ORDER = randomUUID();

let db: TestDatabase;
let client: pg.Client;
beforeAll(async () => {
  db = await createOutboxDatabase('console_reads_plan');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query('alter table outbox disable trigger outbox_notify_after_insert');
  // A day of history, published, and one order's three events among it.
  await client.query(
    `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload,
                         headers, status, attempts, published_at)
     select gen_random_uuid(), '/orders', 'order', a.id::text, e.type, 1, '{}',
            jsonb_build_object('traceparent', '00-' || md5(a.id::text) || '-0000000000000001-01'),
            'published', 1, now()
       from (select case when n = 0 then $2::uuid else gen_random_uuid() end as id
               from generate_series(0, $1::int - 1) as n) as a
      cross join unnest(array['ORDER_CREATED', 'ORDER_CONFIRMED', 'ORDER_CANCELLED']) as e (type)`,
    [PUBLISHED_ORDERS, ORDER],
  );
  await client.query('alter table outbox enable trigger outbox_notify_after_insert');
  await client.query('vacuum analyze outbox');
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };

/** Every scan of the plan: its node type and, for an index scan, the index. */
function scans(node: PlanNode, out: { node: string; index?: string }[] = []) {
  if (node['Node Type'].includes('Scan')) out.push({ node: node['Node Type'], index: node['Index Name'] });
  for (const child of node.Plans ?? []) scans(child, out);
  return out;
}

async function planOf(sql: string, params: unknown[]): Promise<PlanNode> {
  const { rows } = await client.query(`explain (format json) ${sql}`, params);
  return (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]?.Plan as PlanNode;
}

const reads: [string, string, unknown[], number][] = [
  ['the timeline: an order’s events', orderEventsSql, [ORDER, 100], 3],
  ['the orders list: the trace context of the listed orders', traceparentsSql, [[ORDER, randomUUID()]], 1],
  ['the orders list: which pending orders have an ORDER_CREATED', withOrderCreatedSql, [[ORDER]], 1],
];

describe('the console reads an order’s events by an index', () => {
  it.each(reads)('%s', async (_name, sql, params, expected) => {
    const found = scans(await planOf(sql, params));
    expect(found.filter((scan) => scan.node === 'Seq Scan')).toEqual([]);
    expect(found.map((scan) => scan.index)).toContain('outbox_aggregate_id_idx');
    expect((await client.query(sql, params)).rows).toHaveLength(expected);
  });
});
