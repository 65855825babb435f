/** The outbox as a where-time-goes run leaves it: what the claim costs there, and why. */
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { OUTBOX_SESSION_OPTIONS, outboxSql } from '@outbox/outbox';
import pg from 'pg';
import { postgresUrl } from '../support/stack.ts';

/** What the claim costs on each outbox as the run leaves it, and why: its plan's time and pages, dead rows, index sizes. */
export type OutboxState = {
  database: string;
  claimExecutionMs: number;
  claimSharedBlocks: number;
  claimPlan: string;
  liveRows: number;
  deadRows: number;
  claimableIndexKiB: number;
  aggregateIndexKiB: number;
};

export type PlanNode = {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
};
export type ExplainRoot = { Plan: PlanNode; 'Execution Time': number };

/** A plan as one line, depth first: `Update > Nested Loop > … > Index Scan (outbox_claimable_idx, 12 buffers)`. */
export function planOutline(node: PlanNode): string {
  const on = node['Index Name'] ?? node['Relation Name'];
  const buffers = node['Shared Hit Blocks'] + node['Shared Read Blocks'];
  const here = `${node['Node Type']}${on ? ` (${on}, ${buffers} buffers)` : ''}`;
  return [here, ...(node.Plans ?? []).map(planOutline)].join(' > ');
}

export async function outboxState(database: string, url: string): Promise<OutboxState> {
  // The relay's session settings, so the plan is the relay's.
  const client = new pg.Client({ connectionString: url, options: OUTBOX_SESSION_OPTIONS });
  await client.connect();
  try {
    // EXPLAIN ANALYZE runs the claim: in a transaction rolled back, so nothing stays claimed.
    await client.query('begin');
    const explained = await client.query<{ 'QUERY PLAN': ExplainRoot[] }>(
      `explain (analyze, buffers, format json) ${outboxSql.claim}`,
      ['where-time-goes-probe', 30_000, 100, []],
    );
    await client.query('rollback');
    const root = explained.rows[0]?.['QUERY PLAN'][0];
    const { rows } = await client.query<{ live: number; dead: number; claimable: number; aggregate: number }>(
      `select n_live_tup::int as live, n_dead_tup::int as dead,
              pg_relation_size('outbox_claimable_idx')::int / 1024 as claimable,
              pg_relation_size('outbox_aggregate_idx')::int / 1024 as aggregate
         from pg_stat_user_tables where relname = 'outbox'`,
    );
    return {
      database,
      claimExecutionMs: Number((root?.['Execution Time'] ?? Number.NaN).toFixed(3)),
      claimSharedBlocks: (root?.Plan['Shared Hit Blocks'] ?? 0) + (root?.Plan['Shared Read Blocks'] ?? 0),
      claimPlan: root ? planOutline(root.Plan) : '',
      liveRows: rows[0]?.live ?? 0,
      deadRows: rows[0]?.dead ?? 0,
      claimableIndexKiB: rows[0]?.claimable ?? 0,
      aggregateIndexKiB: rows[0]?.aggregate ?? 0,
    };
  } finally {
    await client.end();
  }
}

export async function statementsAvailable(): Promise<boolean> {
  const rows = await queryOnce<{ loaded: boolean }>(
    postgresUrl,
    `select exists (select 1 from pg_extension where extname = 'pg_stat_statements')
        and current_setting('shared_preload_libraries') like '%pg_stat_statements%' as loaded`,
  );
  return rows[0]?.loaded === true;
}
