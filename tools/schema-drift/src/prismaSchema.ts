// The Prisma side of the drift check: schema.prisma parsed offline to its DMMF datamodel (only the
// parts the comparison reads), and the names and column types Prisma derives from it.
import { createRequire } from 'node:module';

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

/** The table a model maps to (`@@map`). */
export function tableName(model: DmmfModel): string {
  return model.dbName ?? model.name;
}

/** The column a field maps to (`@map`). */
export function columnName(field: DmmfField): string {
  return field.dbName ?? field.name;
}

/** The model's ids, uniques and indexes, from `datamodel.indexes` or (older DMMF) the model itself. */
export function indexesOf(model: DmmfModel, datamodel: DmmfDatamodel): DmmfIndex[] {
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

function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}
