// The database side of the drift check: what the comparison needs from pg_catalog, read in five
// queries over one connection.
import pg from 'pg';

export type DbColumn = {
  name: string;
  /** `format_type()` of the column, e.g. `character(3)`, `timestamp with time zone`. */
  type: string;
  notNull: boolean;
  /** `pg_get_expr()` of the column default, or null. */
  default: string | null;
  identity: boolean;
  generated: boolean;
};

export type DbIndex = {
  name: string;
  /** Key columns in order; null for an expression. */
  columns: (string | null)[];
  descending: boolean[];
  unique: boolean;
  primary: boolean;
  partial: boolean;
  method: string;
};

export type DbForeignKey = {
  name: string;
  columns: string[];
  refTable: string;
  refColumns: string[];
  /** pg_constraint.confdeltype / confupdtype: a, r, c, n or d. */
  onDelete: string;
  onUpdate: string;
};

export type DbTable = { name: string; columns: DbColumn[]; indexes: DbIndex[]; foreignKeys: DbForeignKey[] };

export type DbCatalog = { tables: DbTable[]; enums: { name: string; values: string[] }[] };

/** Ordinary and partitioned tables, partitions left out. */
const TABLES_SQL = `select c.relname::text as name
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = $1 and c.relkind in ('r', 'p') and not c.relispartition
    order by c.relname`;

/** Every live column of those tables, in declaration order. */
const COLUMNS_SQL = `select c.relname::text as table, a.attname::text as name,
          format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as "notNull",
          pg_get_expr(d.adbin, d.adrelid) as default,
          a.attidentity <> '' as identity, a.attgenerated <> '' as generated
     from pg_attribute a
     join pg_class c on c.oid = a.attrelid
     join pg_namespace n on n.oid = c.relnamespace
     left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where n.nspname = $1 and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped
    order by c.relname, a.attnum`;

/** Every index with its key columns in order (null for an expression) and each key's sort direction. */
const INDEXES_SQL = `select t.relname::text as table, i.relname::text as name,
          x.indisunique as unique, x.indisprimary as primary, x.indpred is not null as partial,
          am.amname::text as method,
          array(select a.attname::text
                  from unnest(x.indkey::int2[]) with ordinality as k(attnum, ord)
                  left join pg_attribute a on a.attrelid = x.indrelid and a.attnum = k.attnum and k.attnum > 0
                 where k.ord <= x.indnkeyatts order by k.ord) as columns,
          array(select (o.opt & 1) = 1
                  from unnest(x.indoption::int2[]) with ordinality as o(opt, ord)
                 where o.ord <= x.indnkeyatts order by o.ord) as descending
     from pg_index x
     join pg_class i on i.oid = x.indexrelid
     join pg_class t on t.oid = x.indrelid
     join pg_namespace n on n.oid = t.relnamespace
     join pg_am am on am.oid = i.relam
    where n.nspname = $1
    order by t.relname, i.relname`;

/** Every foreign key with its columns, the referenced columns and the referential actions. */
const FOREIGN_KEYS_SQL = `select t.relname::text as table, con.conname::text as name, r.relname::text as "refTable",
          con.confdeltype::text as "onDelete", con.confupdtype::text as "onUpdate",
          array(select a.attname::text from unnest(con.conkey) with ordinality as k(attnum, ord)
                  join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum
                 order by k.ord) as columns,
          array(select a.attname::text from unnest(con.confkey) with ordinality as k(attnum, ord)
                  join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.attnum
                 order by k.ord) as "refColumns"
     from pg_constraint con
     join pg_class t on t.oid = con.conrelid
     join pg_class r on r.oid = con.confrelid
     join pg_namespace n on n.oid = t.relnamespace
    where con.contype = 'f' and n.nspname = $1
    order by t.relname, con.conname`;

/** Every enum type with its labels in order. */
const ENUMS_SQL = `select t.typname::text as name,
          array(select e.enumlabel::text from pg_enum e where e.enumtypid = t.oid order by e.enumsortorder) as values
     from pg_type t join pg_namespace n on n.oid = t.typnamespace
    where t.typtype = 'e' and n.nspname = $1`;

export async function readCatalog(databaseUrl: string, dbSchema = 'public'): Promise<DbCatalog> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(TABLES_SQL, [dbSchema]);
    const columns = await client.query<DbColumn & { table: string }>(COLUMNS_SQL, [dbSchema]);
    const indexes = await client.query<DbIndex & { table: string }>(INDEXES_SQL, [dbSchema]);
    const foreignKeys = await client.query<DbForeignKey & { table: string }>(FOREIGN_KEYS_SQL, [dbSchema]);
    const enums = await client.query<{ name: string; values: string[] }>(ENUMS_SQL, [dbSchema]);
    return {
      tables: tables.rows.map(({ name }) => ({
        name,
        columns: columns.rows.filter((row) => row.table === name).map(({ table: _, ...column }) => column),
        indexes: indexes.rows.filter((row) => row.table === name).map(({ table: _, ...index }) => index),
        foreignKeys: foreignKeys.rows.filter((row) => row.table === name).map(({ table: _, ...fk }) => fk),
      })),
      enums: enums.rows,
    };
  } finally {
    await client.end();
  }
}
