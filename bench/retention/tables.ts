/** The generated rows, the outbox's index definitions, and the sizes and WAL a step leaves. */
import type pg from 'pg';
import { mib } from './timing.ts';

export const payloadSql = (orderExpr: string) => `jsonb_build_object(
    'orderId', ${orderExpr}, 'customerId', 'customer-' || (n % 997)::text, 'currency', 'EUR',
    'totalCents', '1999',
    'items', jsonb_build_array(jsonb_build_object('sku', 'MS-202', 'quantity', 1, 'unitPriceCents', '1999')))`;

/** Published rows n = from+1 .. to: four events per order, created in seq order, published 50 ms later. */
export const insertPublishedSql = `
  insert into outbox (id, seq, source, aggregate_type, aggregate_id, event_type, schema_version, payload,
                      status, attempts, next_attempt_at, created_at, published_at)
  select gen_random_uuid(), n, '/orders', 'order', 'order-' || (n / 4)::text, 'ORDER_CREATED', 1,
         ${payloadSql(`'order-' || (n / 4)::text`)},
         'published', 1, t, t, t + interval '50 milliseconds'
    from (select n, $3::timestamptz + (n - 1) * ($4::timestamptz - $3::timestamptz) / $5::bigint as t
            from generate_series($1::bigint + 1, $2::bigint) as n) as s`;

/** Pending rows, round-robin over the aggregates (so each aggregate has several queued events). */
export const insertPendingSql = `
  insert into outbox (id, seq, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
  select gen_random_uuid(), $1::bigint + n, '/orders', 'order', 'pending-order-' || (n % $3::int)::text,
         'ORDER_CREATED', 1, ${payloadSql(`'pending-order-' || (n % $3::int)::text`)}
    from generate_series(1, $2::int) as n`;

export type IndexDefs = {
  constraints: { name: string; def: string }[];
  indexes: { name: string; def: string }[];
};

/** The table's primary key, unique constraints and other indexes, exactly as the migration made them. */
export async function indexDefinitions(client: pg.ClientBase, table: string): Promise<IndexDefs> {
  const constraints = await client.query<{ name: string; def: string }>(
    `select conname as name, pg_get_constraintdef(oid) as def
       from pg_constraint where conrelid = $1::regclass and contype in ('p', 'u') order by conname`,
    [table],
  );
  const indexes = await client.query<{ name: string; def: string }>(
    `select i.relname as name, pg_get_indexdef(i.oid) as def
       from pg_index x join pg_class i on i.oid = x.indexrelid
      where x.indrelid = $1::regclass
        and not exists (select 1 from pg_constraint c where c.conindid = x.indexrelid)
      order by i.relname`,
    [table],
  );
  return { constraints: constraints.rows, indexes: indexes.rows };
}

export async function dropIndexes(client: pg.ClientBase, table: string, defs: IndexDefs) {
  for (const c of defs.constraints) await client.query(`alter table ${table} drop constraint ${c.name}`);
  for (const i of defs.indexes) await client.query(`drop index ${i.name}`);
}

export async function createIndexes(client: pg.ClientBase, table: string, defs: IndexDefs) {
  for (const c of defs.constraints)
    await client.query(`alter table ${table} add constraint ${c.name} ${c.def}`);
  for (const i of defs.indexes) await client.query(i.def);
}

export type Sizes = {
  totalMiB: number;
  heapMiB: number;
  indexesMiB: number;
  rows: number;
  published: number;
};

export async function tableSizes(client: pg.ClientBase, table: string): Promise<Sizes> {
  // A partitioned table has no storage of its own: sum over its leaves.
  const { rows } = await client.query(
    `select coalesce(sum(pg_total_relation_size(relid)), 0)::bigint as total,
            coalesce(sum(pg_relation_size(relid)), 0)::bigint as heap,
            coalesce(sum(pg_indexes_size(relid)), 0)::bigint as indexes
       from (select relid from pg_partition_tree($1::regclass) where isleaf
             union select $1::regclass) as leaves`,
    [table],
  );
  const counts = await client.query(
    `select count(*)::bigint as rows, count(*) filter (where status = 'published')::bigint as published
       from ${table}`,
  );
  const row = rows[0] as Record<string, string>;
  const count = counts.rows[0] as Record<string, string>;
  return {
    totalMiB: mib(Number(row.total)),
    heapMiB: mib(Number(row.heap)),
    indexesMiB: mib(Number(row.indexes)),
    rows: Number(count.rows),
    published: Number(count.published),
  };
}

export async function walLsn(client: pg.ClientBase): Promise<string> {
  return String((await client.query('select pg_current_wal_lsn() as lsn')).rows[0]?.lsn);
}
export async function walSince(client: pg.ClientBase, lsn: string): Promise<number> {
  const { rows } = await client.query('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint as bytes', [
    lsn,
  ]);
  return mib(Number(rows[0]?.bytes));
}

export const dayName = (d: Date) => d.toISOString().slice(0, 10).replaceAll('-', '');
