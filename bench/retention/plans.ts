/** What PostgreSQL does for the claim on a table: EXPLAIN (ANALYZE, BUFFERS), rolled back. */
import type pg from 'pg';
import { round } from '../support/stats.ts';
import { claimParams, claimSqlOn } from './claims.ts';

export type Plan = {
  table: string;
  phase: string;
  text: string;
  /** Planning and execution time of the execution shown in `text`. */
  planningMs: number;
  executionMs: number;
  scans: string[];
};

export function scanNodes(node: Record<string, unknown>, out: string[] = []): string[] {
  const type = String(node['Node Type']);
  if (/Scan/.test(type)) {
    const relation = node['Relation Name'] ? ` on ${node['Relation Name']}` : '';
    const index = node['Index Name'] ? ` using ${node['Index Name']}` : '';
    // One entry per kind of scan: partitions (outbox_p_20261112, …) fold into outbox_p_<day>.
    out.push(`${type}${index}${relation}`.replaceAll(/_\d{8}/g, '_<day>'));
  }
  for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) scanNodes(child, out);
  return out;
}

export const planTime = (text: string, what: string) =>
  round(Number(new RegExp(`${what} Time: ([\\d.]+) ms`).exec(text)?.[1] ?? Number.NaN));

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the claim, in a rolled-back transaction; then once more in JSON
 * (also rolled back) to list the scans it uses.
 */
export async function explainClaim(client: pg.ClientBase, table: string, phase: string): Promise<Plan> {
  const sql = claimSqlOn(table);
  await client.query('begin');
  try {
    const text = await client.query(`explain (analyze, buffers) ${sql}`, claimParams());
    const plan = text.rows.map((row) => String(row['QUERY PLAN'])).join('\n');
    await client.query('rollback');
    await client.query('begin');
    const json = await client.query(`explain (analyze, buffers, format json) ${sql}`, claimParams());
    const explained = (json.rows[0]?.['QUERY PLAN'] ?? []) as Record<string, unknown>[];
    const root = explained[0] ?? {};
    return {
      table,
      phase,
      text: plan,
      planningMs: planTime(plan, 'Planning'),
      executionMs: planTime(plan, 'Execution'),
      scans: [...new Set(scanNodes(root.Plan as Record<string, unknown>))],
    };
  } finally {
    await client.query('rollback');
  }
}
