import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import pg from 'pg';

/**
 * Schema drift check: does a schema.prisma describe the database its SQL migrations build?
 *
 * The services' tables are created by plain SQL migrations (see docs/migrations.md), while their
 * code reads and writes them through a Prisma client generated from schema.prisma. Nothing ties the
 * two together except this check: it parses schema.prisma offline (Prisma's schema WASM, no engine
 * binary), reads the migrated database's catalog and lists every difference Prisma would care about.
 * An empty list means they are in step.
 */

export type SchemaDriftOptions = {
  /** Path of the schema.prisma to check. */
  schemaPath: string;
  /** A database the migrations have been applied to. */
  databaseUrl: string;
  /** Tables that exist in the database on purpose without a model (outbox, migration history…). */
  ignoreTables?: readonly string[];
  /** The PostgreSQL schema the tables live in. */
  dbSchema?: string;
};

export async function findSchemaDrift(options: SchemaDriftOptions): Promise<string[]> {
  const datamodel = parsePrismaSchema(readFileSync(options.schemaPath, 'utf8'), options.schemaPath);
  const catalog = await readCatalog(options.databaseUrl, options.dbSchema ?? 'public');
  return compareSchema(datamodel, catalog, { ignoreTables: options.ignoreTables ?? [] });
}

// ---------------------------------------------------------------------------------------------
// The Prisma side: the DMMF datamodel (only the parts the comparison reads).

export type DmmfDefault = { name: string; args: unknown[] } | string | number | boolean | unknown[];

export type DmmfField = {
  name: string;
  dbName?: string | null;
  kind: 'scalar' | 'object' | 'enum' | 'unsupported';
  type: string;
  nativeType?: [string, string[]] | null;
  isList: boolean;
  isRequired: boolean;
  isId: boolean;
  isUnique: boolean;
  hasDefaultValue: boolean;
  default?: DmmfDefault;
  isUpdatedAt?: boolean;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
};

export type DmmfModel = {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
  primaryKey: { name: string | null; fields: string[] } | null;
  uniqueFields: string[][];
};

export type DmmfIndex = {
  model: string;
  type: 'id' | 'normal' | 'unique' | 'fulltext';
  dbName?: string | null;
  algorithm?: string;
  fields: { name: string; sortOrder?: 'asc' | 'desc' }[];
};

export type DmmfEnum = {
  name: string;
  dbName?: string | null;
  values: { name: string; dbName?: string | null }[];
};

export type DmmfDatamodel = {
  models: DmmfModel[];
  enums: DmmfEnum[];
  indexes?: DmmfIndex[];
};

type SchemaWasm = typeof import('@prisma/prisma-schema-wasm');

/** Parse schema.prisma text to its DMMF datamodel, offline. Throws with Prisma's validation errors. */
export function parsePrismaSchema(schemaText: string, fileName = 'schema.prisma'): DmmfDatamodel {
  const wasm = createRequire(import.meta.url)('@prisma/prisma-schema-wasm') as SchemaWasm;
  let dmmf: string;
  try {
    dmmf = wasm.get_dmmf(JSON.stringify({ prismaSchema: [['schema.prisma', schemaText]] }));
  } catch (err) {
    const raw = err instanceof Error ? err.message : String(err);
    let message = raw;
    try {
      message = (JSON.parse(raw) as { message?: string }).message ?? raw;
    } catch {}
    // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the ANSI colours of Prisma's report
    throw new Error(`${fileName} is not a valid Prisma schema:\n${message.replace(/\u001b\[[0-9;]*m/g, '')}`);
  }
  return (JSON.parse(dmmf) as { datamodel: DmmfDatamodel }).datamodel;
}

// ---------------------------------------------------------------------------------------------
// The database side: what the comparison needs from pg_catalog.

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

export async function readCatalog(databaseUrl: string, dbSchema = 'public'): Promise<DbCatalog> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      `select c.relname::text as name
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = $1 and c.relkind in ('r', 'p') and not c.relispartition
        order by c.relname`,
      [dbSchema],
    );
    const columns = await client.query<DbColumn & { table: string }>(
      `select c.relname::text as table, a.attname::text as name,
              format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as "notNull",
              pg_get_expr(d.adbin, d.adrelid) as default,
              a.attidentity <> '' as identity, a.attgenerated <> '' as generated
         from pg_attribute a
         join pg_class c on c.oid = a.attrelid
         join pg_namespace n on n.oid = c.relnamespace
         left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where n.nspname = $1 and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped
        order by c.relname, a.attnum`,
      [dbSchema],
    );
    const indexes = await client.query<DbIndex & { table: string }>(
      `select t.relname::text as table, i.relname::text as name,
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
        order by t.relname, i.relname`,
      [dbSchema],
    );
    const foreignKeys = await client.query<DbForeignKey & { table: string }>(
      `select t.relname::text as table, con.conname::text as name, r.relname::text as "refTable",
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
        order by t.relname, con.conname`,
      [dbSchema],
    );
    const enums = await client.query<{ name: string; values: string[] }>(
      `select t.typname::text as name,
              array(select e.enumlabel::text from pg_enum e where e.enumtypid = t.oid order by e.enumsortorder) as values
         from pg_type t join pg_namespace n on n.oid = t.typnamespace
        where t.typtype = 'e' and n.nspname = $1`,
      [dbSchema],
    );
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

// ---------------------------------------------------------------------------------------------
// The comparison.

/** Prisma generates these defaults in the client; the database needs no default for them. */
const CLIENT_SIDE_DEFAULTS = new Set(['uuid', 'cuid', 'nanoid', 'ulid']);

const REFERENTIAL_ACTIONS: Record<string, string> = {
  Cascade: 'c',
  Restrict: 'r',
  NoAction: 'a',
  SetNull: 'n',
  SetDefault: 'd',
};
const ACTION_NAMES: Record<string, string> = {
  c: 'Cascade',
  r: 'Restrict',
  a: 'NoAction',
  n: 'SetNull',
  d: 'SetDefault',
};

export function compareSchema(
  datamodel: DmmfDatamodel,
  catalog: DbCatalog,
  options: { ignoreTables?: readonly string[] } = {},
): string[] {
  const drift: string[] = [];
  const ignore = new Set(options.ignoreTables ?? []);
  const tables = new Map(catalog.tables.map((table) => [table.name, table]));
  const models = new Map(datamodel.models.map((model) => [model.name, model]));
  const enums = new Map(datamodel.enums.map((e) => [e.name, e]));
  const dbEnums = new Map(catalog.enums.map((e) => [e.name, e.values]));
  const modelled = new Set(datamodel.models.map(tableName));
  const checkedEnums = new Set<string>();

  for (const model of datamodel.models) {
    const table = tables.get(tableName(model));
    const where = `${tableName(model)} (model ${model.name})`;
    if (!table) {
      drift.push(`${where}: schema.prisma has the model, database has no table ${tableName(model)}`);
      continue;
    }
    const columns = new Map(table.columns.map((column) => [column.name, column]));
    const scalars = model.fields.filter((field) => field.kind === 'scalar' || field.kind === 'enum');
    const columnOf = (fieldName: string): string => {
      const field = model.fields.find((f) => f.name === fieldName);
      return field ? columnName(field) : fieldName;
    };

    // Columns: existence, type, nullability, default.
    for (const field of scalars) {
      const at = `${table.name}.${columnName(field)}`;
      const column = columns.get(columnName(field));
      const expectedType = prismaColumnType(field, enums);
      const expectedNull = field.isRequired || field.isList ? 'NOT NULL' : 'NULL';
      if (!column) {
        drift.push(
          `${at}: schema.prisma says ${expectedType} ${expectedNull} (${model.name}.${field.name}), database has no such column`,
        );
        continue;
      }
      // Prisma treats scalar lists as required whatever the column says; only their type is compared.
      const nullMismatch = !field.isList && field.isRequired !== column.notNull;
      if (normalizeDbType(column.type) !== normalizeDbType(expectedType) || nullMismatch) {
        const actualNull = column.notNull ? 'NOT NULL' : 'NULL';
        const said = field.isList ? expectedType : `${expectedType} ${expectedNull}`;
        const has = field.isList ? column.type : `${column.type} ${actualNull}`;
        drift.push(`${at}: schema.prisma says ${said}, database has ${has}`);
      }
      drift.push(...compareDefault(at, field, column, enums));
      if (field.kind === 'enum' && !checkedEnums.has(field.type)) {
        checkedEnums.add(field.type);
        const prismaEnum = enums.get(field.type);
        if (prismaEnum) drift.push(...compareEnum(prismaEnum, dbEnums));
      }
    }
    const fieldColumns = new Set(scalars.map(columnName));
    for (const column of table.columns) {
      if (!fieldColumns.has(column.name)) {
        drift.push(
          `${table.name}.${column.name}: schema.prisma has no field for it, database has ${column.type} ${column.notNull ? 'NOT NULL' : 'NULL'}${column.default !== null ? ` default ${column.default}` : ''}`,
        );
      }
    }

    // Primary key.
    const idFields =
      model.primaryKey?.fields ?? model.fields.filter((field) => field.isId).map((f) => f.name);
    const expectedPk = idFields.map(columnOf);
    const actualPk = table.indexes.find((index) => index.primary);
    const actualPkColumns = actualPk ? actualPk.columns.map((c) => c ?? '(expression)') : [];
    if (expectedPk.join() !== actualPkColumns.join()) {
      drift.push(
        `${where}: schema.prisma says primary key ${describeColumns(expectedPk)}, database has primary key ${describeColumns(actualPkColumns)}`,
      );
    }

    // Unique constraints and indexes (non-partial, on plain columns: what @unique/@@unique can say).
    const modelIndexes = indexesOf(model, datamodel);
    const dbUniques = table.indexes.filter(
      (index) => index.unique && !index.primary && !index.partial && index.columns.every((c) => c !== null),
    );
    const matchedUniques = new Set<DbIndex>();
    for (const unique of modelIndexes.filter((index) => index.type === 'unique')) {
      const expected = unique.fields.map((f) => columnOf(f.name));
      const found = dbUniques.find((index) => sameSet(index.columns, expected));
      const label = unique.dbName ? `${unique.dbName} ` : '';
      if (!found) {
        drift.push(
          `${where}: schema.prisma says unique ${label}${describeColumns(expected)}, database has no such unique constraint or index`,
        );
        continue;
      }
      matchedUniques.add(found);
      if (unique.dbName && unique.dbName !== found.name) {
        drift.push(
          `${where}: schema.prisma says unique ${describeColumns(expected)} is named ${unique.dbName}, database names it ${found.name}`,
        );
      }
    }
    for (const index of dbUniques) {
      if (!matchedUniques.has(index)) {
        drift.push(
          `${where}: schema.prisma has no @unique/@@unique for ${describeColumns(index.columns)}, database has unique index ${index.name}`,
        );
      }
    }

    // Plain indexes (@@index). Partial and expression indexes cannot be written in schema.prisma and are skipped.
    const dbPlain = table.indexes.filter(
      (index) => !index.unique && !index.primary && !index.partial && index.columns.every((c) => c !== null),
    );
    const matchedPlain = new Set<DbIndex>();
    for (const wanted of modelIndexes.filter((index) => index.type === 'normal')) {
      const expected = wanted.fields.map((f) => columnOf(f.name));
      const expectedDesc = wanted.fields.map((f) => f.sortOrder === 'desc');
      const method = (wanted.algorithm ?? 'btree').toLowerCase();
      const shape = `${describeIndex(expected, expectedDesc)} using ${method}`;
      const candidates = wanted.dbName ? dbPlain.filter((index) => index.name === wanted.dbName) : dbPlain;
      const found = candidates.find(
        (index) =>
          index.columns.join() === expected.join() &&
          index.descending.join() === expectedDesc.join() &&
          index.method === method,
      );
      if (found) {
        matchedPlain.add(found);
        continue;
      }
      const named = wanted.dbName ? table.indexes.find((index) => index.name === wanted.dbName) : undefined;
      if (named) matchedPlain.add(named); // reported here, not again as an index Prisma does not know
      drift.push(
        `${where}: schema.prisma says index ${wanted.dbName ? `${wanted.dbName} ` : ''}${shape}, database has ${
          named
            ? `${named.name} ${describeIndex(named.columns, named.descending)} using ${named.method}${named.unique ? ' (unique)' : ''}${named.partial ? ' (partial)' : ''}`
            : 'no such index'
        }`,
      );
    }
    for (const index of dbPlain) {
      if (!matchedPlain.has(index)) {
        drift.push(
          `${where}: schema.prisma has no @@index for ${describeIndex(index.columns, index.descending)}, database has index ${index.name} using ${index.method}`,
        );
      }
    }

    // Foreign keys: every relation that holds the keys (relationFromFields) and nothing else.
    const matchedFks = new Set<DbForeignKey>();
    for (const relation of model.fields.filter((f) => f.kind === 'object' && f.relationFromFields?.length)) {
      const target = models.get(relation.type);
      const fromColumns = (relation.relationFromFields ?? []).map(columnOf);
      const toColumns = (relation.relationToFields ?? []).map((name) => {
        const field = target?.fields.find((f) => f.name === name);
        return field ? columnName(field) : name;
      });
      const refTable = target ? tableName(target) : relation.type;
      const expected = `foreign key ${describeColumns(fromColumns)} references ${refTable} ${describeColumns(toColumns)}`;
      const at = `${table.name}.${fromColumns.join(', ')}`;
      const found = table.foreignKeys.find(
        (fk) =>
          fk.refTable === refTable &&
          samePairs(fk.columns, fk.refColumns, fromColumns, toColumns) &&
          !matchedFks.has(fk),
      );
      if (!found) {
        const onColumns = table.foreignKeys.filter((fk) => sameSet(fk.columns, fromColumns));
        drift.push(
          `${at}: schema.prisma says ${expected} (${model.name}.${relation.name}), database has ${
            onColumns.length
              ? onColumns
                  .map((fk) => `${fk.name} references ${fk.refTable} ${describeColumns(fk.refColumns)}`)
                  .join('; ')
              : 'no such foreign key'
          }`,
        );
        continue;
      }
      matchedFks.add(found);
      for (const [prop, dbProp, word] of [
        ['relationOnDelete', 'onDelete', 'onDelete'],
        ['relationOnUpdate', 'onUpdate', 'onUpdate'],
      ] as const) {
        const wanted = relation[prop];
        if (wanted && REFERENTIAL_ACTIONS[wanted] !== found[dbProp]) {
          drift.push(
            `${at}: schema.prisma says ${word}: ${wanted} (${model.name}.${relation.name}), database has ${ACTION_NAMES[found[dbProp]] ?? found[dbProp]} on ${found.name}`,
          );
        }
      }
    }
    for (const fk of table.foreignKeys) {
      if (!matchedFks.has(fk)) {
        drift.push(
          `${table.name}.${fk.columns.join(', ')}: schema.prisma has no @relation for it, database has foreign key ${fk.name} references ${fk.refTable} ${describeColumns(fk.refColumns)}`,
        );
      }
    }
  }

  for (const table of catalog.tables) {
    if (!modelled.has(table.name) && !ignore.has(table.name)) {
      drift.push(`${table.name}: schema.prisma has no model for it, database has table ${table.name}`);
    }
  }
  return drift;
}

function tableName(model: DmmfModel): string {
  return model.dbName ?? model.name;
}

function columnName(field: DmmfField): string {
  return field.dbName ?? field.name;
}

/** The model's ids, uniques and indexes, from `datamodel.indexes` or (older DMMF) the model itself. */
function indexesOf(model: DmmfModel, datamodel: DmmfDatamodel): DmmfIndex[] {
  if (datamodel.indexes) return datamodel.indexes.filter((index) => index.model === model.name);
  return [
    ...model.fields
      .filter((field) => field.isUnique)
      .map((field): DmmfIndex => ({ model: model.name, type: 'unique', fields: [{ name: field.name }] })),
    ...model.uniqueFields.map(
      (fields): DmmfIndex => ({
        model: model.name,
        type: 'unique',
        fields: fields.map((name) => ({ name })),
      }),
    ),
  ];
}

/**
 * The column type Prisma expects, spelled as PostgreSQL's `format_type()` spells it (the same types
 * `prisma migrate` would have created for this field).
 */
export function prismaColumnType(field: DmmfField, enums: ReadonlyMap<string, DmmfEnum> = new Map()): string {
  return baseType(field, enums) + (field.isList ? '[]' : '');
}

function baseType(field: DmmfField, enums: ReadonlyMap<string, DmmfEnum>): string {
  if (field.kind === 'enum') {
    const prismaEnum = enums.get(field.type);
    return quoteIdent(prismaEnum?.dbName ?? field.type);
  }
  const [native, args = []] = field.nativeType ?? [];
  const precision = (fallback: string) => `(${args[0] ?? fallback})`;
  switch (native) {
    case undefined:
      break;
    case 'Text':
      return 'text';
    case 'Char':
      return `character${precision('1')}`;
    case 'VarChar':
      return args.length ? `character varying(${args[0]})` : 'character varying';
    case 'Bit':
      return `bit${precision('1')}`;
    case 'VarBit':
      return args.length ? `bit varying(${args[0]})` : 'bit varying';
    case 'Uuid':
    case 'Xml':
    case 'Inet':
    case 'Citext':
    case 'Money':
    case 'Date':
    case 'Oid':
    case 'Json':
    case 'Boolean':
    case 'SmallInt':
    case 'Integer':
    case 'BigInt':
    case 'Real':
      return native.toLowerCase();
    case 'JsonB':
      return 'jsonb';
    case 'ByteA':
      return 'bytea';
    case 'DoublePrecision':
      return 'double precision';
    case 'Decimal':
      return args.length ? `numeric(${args.join(',')})` : 'numeric(65,30)';
    case 'Timestamp':
      return `timestamp${precision('6')} without time zone`;
    case 'Timestamptz':
      return `timestamp${precision('6')} with time zone`;
    case 'Time':
      return `time${precision('6')} without time zone`;
    case 'Timetz':
      return `time${precision('6')} with time zone`;
    default:
      return `${native.toLowerCase()}${args.length ? `(${args.join(',')})` : ''}`;
  }
  switch (field.type) {
    case 'String':
      return 'text';
    case 'Boolean':
      return 'boolean';
    case 'Int':
      return 'integer';
    case 'BigInt':
      return 'bigint';
    case 'Float':
      return 'double precision';
    case 'Decimal':
      return 'numeric(65,30)';
    case 'DateTime':
      return 'timestamp(3) without time zone';
    case 'Json':
      return 'jsonb';
    case 'Bytes':
      return 'bytea';
    default:
      return field.type;
  }
}

/** PostgreSQL leaves out the default precision (6) of time types: make it explicit on both sides. */
function normalizeDbType(type: string): string {
  return type.replace(/^(timestamp|time) (with|without) time zone/, '$1(6) $2 time zone');
}

function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

function compareDefault(
  at: string,
  field: DmmfField,
  column: DbColumn,
  enums: ReadonlyMap<string, DmmfEnum>,
): string[] {
  let prismaDefault = field.default;
  if (field.kind === 'enum' && typeof prismaDefault === 'string') {
    // An enum default names the Prisma value; the database stores its @map name.
    const value = enums.get(field.type)?.values.find((v) => v.name === prismaDefault);
    prismaDefault = value?.dbName ?? prismaDefault;
  }
  const generatedByClient =
    typeof prismaDefault === 'object' &&
    prismaDefault !== null &&
    !Array.isArray(prismaDefault) &&
    CLIENT_SIDE_DEFAULTS.has(prismaDefault.name);
  const wantsDbDefault = field.hasDefaultValue && !generatedByClient;
  const dbDefault = column.identity
    ? 'generated as identity'
    : column.generated
      ? `generated always as ${column.default ?? '(expression)'}`
      : column.default;
  if (!wantsDbDefault) {
    if (dbDefault === null || generatedByClient) return [];
    return [`${at}: schema.prisma says no default, database has default ${dbDefault}`];
  }
  const wanted = describePrismaDefault(prismaDefault);
  if (dbDefault === null) return [`${at}: schema.prisma says default ${wanted}, database has no default`];
  return defaultsAgree(prismaDefault, column)
    ? []
    : [`${at}: schema.prisma says default ${wanted}, database has default ${dbDefault}`];
}

function describePrismaDefault(value: DmmfDefault | undefined): string {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return `${value.name}(${value.args.map((arg) => JSON.stringify(arg)).join(', ')})`;
  }
  return JSON.stringify(value);
}

/** Whether the database default is the one Prisma means, where that can be told from the catalog. */
function defaultsAgree(value: DmmfDefault | undefined, column: DbColumn): boolean {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    if (value.name === 'now') return /^(now\(\)|CURRENT_TIMESTAMP)$/i.test(column.default ?? '');
    if (value.name === 'autoincrement') return column.identity || /^nextval\(/.test(column.default ?? '');
    return true; // dbgenerated(...) and friends: present is all that can be checked reliably.
  }
  const literal = parseLiteral(column.default);
  if (literal === undefined || Array.isArray(value) || value === undefined) return true;
  return literal === String(value);
}

/** `'pending'::text` → `pending`, `0` → `0`, `true` → `true`; anything else (an expression) → undefined. */
function parseLiteral(expression: string | null): string | undefined {
  if (expression === null) return undefined;
  const quoted = /^'((?:[^']|'')*)'(?:::[a-z][\w\s."]*(?:\(\d+(?:,\d+)?\))?(?:\[\])?)?$/i.exec(expression);
  if (quoted) return (quoted[1] ?? '').replaceAll("''", "'");
  if (/^-?\d+(\.\d+)?$/.test(expression) || /^(true|false)$/.test(expression)) return expression;
  return undefined;
}

function compareEnum(prismaEnum: DmmfEnum, dbEnums: ReadonlyMap<string, string[]>): string[] {
  const name = prismaEnum.dbName ?? prismaEnum.name;
  const expected = prismaEnum.values.map((value) => value.dbName ?? value.name);
  const actual = dbEnums.get(name);
  if (!actual)
    return [`enum ${name}: schema.prisma says (${expected.join(', ')}), database has no such enum type`];
  if (!sameSet(actual, expected)) {
    return [`enum ${name}: schema.prisma says (${expected.join(', ')}), database has (${actual.join(', ')})`];
  }
  return [];
}

function describeColumns(columns: readonly (string | null)[]): string {
  return columns.length ? `(${columns.map((c) => c ?? '(expression)').join(', ')})` : 'none';
}

function describeIndex(columns: readonly (string | null)[], descending: readonly boolean[]): string {
  return `(${columns.map((c, i) => `${c ?? '(expression)'}${descending[i] ? ' desc' : ''}`).join(', ')})`;
}

function sameSet(a: readonly (string | null)[], b: readonly (string | null)[]): boolean {
  return a.length === b.length && [...a].sort().join('\0') === [...b].sort().join('\0');
}

function samePairs(aFrom: string[], aTo: string[], bFrom: string[], bTo: string[]): boolean {
  const pairs = (from: string[], to: string[]) => from.map((column, i) => `${column}\0${to[i]}`);
  return sameSet(pairs(aFrom, aTo), pairs(bFrom, bTo));
}
