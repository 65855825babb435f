// The comparison of the drift check: a Prisma datamodel against a database catalog, model by model
// (columns, primary key, unique constraints, indexes, foreign keys), then the tables no model maps.
// Each difference is one line saying what schema.prisma says and what the database has.
import type { DbCatalog, DbForeignKey, DbIndex, DbTable } from './catalog.ts';
import { compareDefault } from './compareDefault.ts';
import {
  columnName,
  type DmmfDatamodel,
  type DmmfEnum,
  type DmmfField,
  type DmmfIndex,
  type DmmfModel,
  indexesOf,
  prismaColumnType,
  tableName,
} from './prismaSchema.ts';

const REFERENTIAL_ACTIONS: Record<string, string> = {
  Cascade: 'c',
  Restrict: 'r',
  NoAction: 'a',
  SetNull: 'n',
  SetDefault: 'd',
};
const ACTION_NAMES = Object.fromEntries(
  Object.entries(REFERENTIAL_ACTIONS).map(([name, code]) => [code, name]),
);

/** What every step reads: the whole datamodel and catalog, by name. */
type Lookups = {
  datamodel: DmmfDatamodel;
  models: ReadonlyMap<string, DmmfModel>;
  enums: ReadonlyMap<string, DmmfEnum>;
  dbEnums: ReadonlyMap<string, string[]>;
  /** Enums already compared: an enum used by several fields is reported once. */
  checkedEnums: Set<string>;
};

/** One model and the table it maps to. */
type Pair = {
  model: DmmfModel;
  table: DbTable;
  /** How a difference of the model as a whole names it: `orders (model Order)`. */
  where: string;
  /** The column of one of the model's fields, by field name. */
  columnOf: (fieldName: string) => string;
};

export function compareSchema(
  datamodel: DmmfDatamodel,
  catalog: DbCatalog,
  options: { ignoreTables?: readonly string[] } = {},
): string[] {
  const drift: string[] = [];
  const ignore = new Set(options.ignoreTables ?? []);
  const tables = new Map(catalog.tables.map((table) => [table.name, table]));
  const lookups: Lookups = {
    datamodel,
    models: new Map(datamodel.models.map((model) => [model.name, model])),
    enums: new Map(datamodel.enums.map((e) => [e.name, e])),
    dbEnums: new Map(catalog.enums.map((e) => [e.name, e.values])),
    checkedEnums: new Set<string>(),
  };
  const modelled = new Set(datamodel.models.map(tableName));

  for (const model of datamodel.models) {
    const table = tables.get(tableName(model));
    const where = `${tableName(model)} (model ${model.name})`;
    if (!table) {
      drift.push(`${where}: schema.prisma has the model, database has no table ${tableName(model)}`);
      continue;
    }
    const columnOf = (fieldName: string): string => {
      const field = model.fields.find((f) => f.name === fieldName);
      return field ? columnName(field) : fieldName;
    };
    const pair: Pair = { model, table, where, columnOf };
    const modelIndexes = indexesOf(model, datamodel);
    drift.push(
      ...compareColumns(pair, lookups),
      ...comparePrimaryKey(pair),
      ...compareUniques(pair, modelIndexes),
      ...comparePlainIndexes(pair, modelIndexes),
      ...compareForeignKeys(pair, lookups.models),
    );
  }

  for (const table of catalog.tables) {
    if (!modelled.has(table.name) && !ignore.has(table.name)) {
      drift.push(`${table.name}: schema.prisma has no model for it, database has table ${table.name}`);
    }
  }
  return drift;
}

/** Columns: existence, type, nullability, default; the enums they use; columns no field maps. */
function compareColumns({ model, table }: Pair, lookups: Lookups): string[] {
  const { enums, dbEnums, checkedEnums } = lookups;
  const drift: string[] = [];
  const columns = new Map(table.columns.map((column) => [column.name, column]));
  const scalars = model.fields.filter((field) => field.kind === 'scalar' || field.kind === 'enum');
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
  return drift;
}

function comparePrimaryKey({ model, table, where, columnOf }: Pair): string[] {
  const idFields = model.primaryKey?.fields ?? model.fields.filter((field) => field.isId).map((f) => f.name);
  const expectedPk = idFields.map(columnOf);
  const actualPk = table.indexes.find((index) => index.primary);
  const actualPkColumns = actualPk ? actualPk.columns.map((c) => c ?? '(expression)') : [];
  if (expectedPk.join() === actualPkColumns.join()) return [];
  return [
    `${where}: schema.prisma says primary key ${describeColumns(expectedPk)}, database has primary key ${describeColumns(actualPkColumns)}`,
  ];
}

/** Unique constraints and indexes (non-partial, on plain columns: what @unique/@@unique can say). */
function compareUniques({ table, where, columnOf }: Pair, modelIndexes: DmmfIndex[]): string[] {
  const drift: string[] = [];
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
  return drift;
}

/** Plain indexes (@@index). Partial and expression indexes cannot be written in schema.prisma and are skipped. */
function comparePlainIndexes({ table, where, columnOf }: Pair, modelIndexes: DmmfIndex[]): string[] {
  const drift: string[] = [];
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
  return drift;
}

/** Foreign keys: every relation that holds the keys (relationFromFields) and nothing else. */
function compareForeignKeys(
  { model, table, columnOf }: Pair,
  models: ReadonlyMap<string, DmmfModel>,
): string[] {
  const drift: string[] = [];
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
    drift.push(...compareReferentialActions(at, `${model.name}.${relation.name}`, relation, found));
  }
  for (const fk of table.foreignKeys) {
    if (!matchedFks.has(fk)) {
      drift.push(
        `${table.name}.${fk.columns.join(', ')}: schema.prisma has no @relation for it, database has foreign key ${fk.name} references ${fk.refTable} ${describeColumns(fk.refColumns)}`,
      );
    }
  }
  return drift;
}

function compareReferentialActions(at: string, fieldName: string, relation: DmmfField, found: DbForeignKey) {
  const drift: string[] = [];
  for (const [prop, action] of [
    ['relationOnDelete', 'onDelete'],
    ['relationOnUpdate', 'onUpdate'],
  ] as const) {
    const wanted = relation[prop];
    if (wanted && REFERENTIAL_ACTIONS[wanted] !== found[action]) {
      drift.push(
        `${at}: schema.prisma says ${action}: ${wanted} (${fieldName}), database has ${ACTION_NAMES[found[action]] ?? found[action]} on ${found.name}`,
      );
    }
  }
  return drift;
}

/** PostgreSQL leaves out the default precision (6) of time types: make it explicit on both sides. */
function normalizeDbType(type: string): string {
  return type.replace(/^(timestamp|time) (with|without) time zone/, '$1(6) $2 time zone');
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
