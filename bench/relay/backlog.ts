/** The outbox rows the relay benchmark commits, and what the planner makes of the claim on them. */
import { toKafkaMessage } from '@outbox/contracts';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import { type OutboxRow, outboxSql, toEnvelope } from '@outbox/outbox';
import type { Message } from 'kafkajs';
import type pg from 'pg';
import { connect } from './relays.ts';

const aggregate = '(($3::int + n) % $2::int)::text';
/** What the events carry: `order` an ORDER_CREATED v1 as the orders API writes it, `small` its id and total only. */
const PAYLOADS = {
  order: `jsonb_build_object(
           'orderId', gen_random_uuid()::text,
           'customerId', 'customer-' || ${aggregate},
           'currency', 'EUR',
           'totalCents', '1999',
           'items', jsonb_build_array(jsonb_build_object('sku', 'MS-202', 'quantity', 1, 'unitPriceCents', '1999')))`,
  small: `jsonb_build_object('orderId', gen_random_uuid()::text, 'totalCents', '1999')`,
};

/**
 * `$1` outbox rows in one statement, each a valid ORDER_CREATED v1 — the same statement as
 * insertEvents (tools/devstack/src/testing/outboxDatabase.ts), here so that it can run inside a
 * transaction of ours: the n-th (from 0) on aggregate `<$4>-<($3 + n) % $2>`, so the rows spread
 * over `$2` aggregates round-robin, from `$3` on. The backlog: `[events, aggregates, 0, 'agg']`.
 */
export const insertEventsSql = (payload: keyof typeof PAYLOADS = 'order') => `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
  select gen_random_uuid(), '/orders', 'order', $4::text || '-' || ${aggregate}, 'ORDER_CREATED', 1,
         ${PAYLOADS[payload]}
    from generate_series(0, $1::int - 1) as n
   order by n`;

/** Already published events: what an outbox holds in steady state (until retention deletes them). */
export const insertHistorySql = `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload,
                      status, published_at)
  select gen_random_uuid(), '/orders', 'order', 'old-' || (n % 2000)::text, 'ORDER_CREATED', 1,
         jsonb_build_object('orderId', gen_random_uuid()::text, 'customerId', 'c', 'currency', 'EUR',
                            'totalCents', '1999', 'items', '[]'::jsonb),
         'published', now()
    from generate_series(1, $1::int) as n`;

/** The relay's claim statement itself, so that EXPLAIN shows the real query's plan. */
export const claimSql = outboxSql.claim;

export type PlanNode = {
  'Node Type': string;
  Alias?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
};

/**
 * How PostgreSQL plans the claim right now, in short: how it finds candidates (alias o) and how
 * it checks for an earlier unpublished event (alias earlier) — by a lookup per candidate (an
 * Index Cond on the aggregate) or by scanning the whole index for every candidate (none).
 */
export async function claimPlan(client: pg.Client, batchSize: number): Promise<string> {
  const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
    `explain (format json) ${claimSql}`,
    ['bench-explain', 30_000, batchSize, []],
  );
  const parts: string[] = [];
  const walk = (node: PlanNode) => {
    if (node['Node Type'] === 'Sort') parts.push('Sort');
    if (node.Alias === 'o_1' || node.Alias === 'earlier') {
      const how =
        node.Alias === 'earlier' ? (node['Index Cond'] ? ' per-row lookup' : ' whole index per row') : '';
      parts.push(
        `${node.Alias === 'earlier' ? 'earlier' : 'o'}: ${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''}${how}`,
      );
    }
    for (const child of node.Plans ?? []) walk(child);
  };
  const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
  if (plan) walk(plan);
  return parts.join('; ');
}

/** The messages the bare producers send: the same rows the relays read, mapped the same way. */
export async function buildMessages(events: number, aggregates: number): Promise<Message[]> {
  const db = await createOutboxDatabase('bench_relay_messages');
  try {
    const client = await connect(db.url);
    try {
      await client.query(insertEventsSql(), [events, aggregates, 0, 'agg']);
      const { rows } = await client.query<OutboxRow>(
        `select id, seq, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers,
                attempts, created_at
           from outbox order by seq`,
      );
      return rows.map((row) => toKafkaMessage(toEnvelope(row)));
    } finally {
      await client.end();
    }
  } finally {
    await db.drop();
  }
}
