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
  if (field.kind === 'enum') return quoteIdent(enums.get(field.type)?.dbName ?? field.type);
  const [native, args = []] = field.nativeType ?? [];
  if (native === undefined) return SCALAR_TYPES[field.type] ?? field.type;
  const spelled = NATIVE_TYPES[native];
  if (spelled) return spelled(args);
  // Uuid, Inet, Integer, JsonB, ByteA…: format_type() spells the rest in lower case, with their arguments.
  return `${native.toLowerCase()}${args.length ? `(${args.join(',')})` : ''}`;
}

/** A field without a native type (`@db.…`): the column type Prisma gives each scalar type. */
const SCALAR_TYPES: Readonly<Record<string, string>> = {
  String: 'text',
  Boolean: 'boolean',
  Int: 'integer',
  BigInt: 'bigint',
  Float: 'double precision',
  Decimal: 'numeric(65,30)',
  DateTime: 'timestamp(3) without time zone',
  Json: 'jsonb',
  Bytes: 'bytea',
};

const optionalLength = (type: string) => (args: string[]) => (args.length ? `${type}(${args[0]})` : type);
const withPrecision =
  (type: string, fallback: string, zone = '') =>
  (args: string[]) =>
    `${type}(${args[0] ?? fallback})${zone}`;

/** The native types format_type() spells differently from their Prisma name, or gives a default precision. */
const NATIVE_TYPES: Readonly<Record<string, (args: string[]) => string>> = {
  Char: withPrecision('character', '1'),
  VarChar: optionalLength('character varying'),
  Bit: withPrecision('bit', '1'),
  VarBit: optionalLength('bit varying'),
  DoublePrecision: () => 'double precision',
  Decimal: (args) => (args.length ? `numeric(${args.join(',')})` : 'numeric(65,30)'),
  Timestamp: withPrecision('timestamp', '6', ' without time zone'),
  Timestamptz: withPrecision('timestamp', '6', ' with time zone'),
  Time: withPrecision('time', '6', ' without time zone'),
  Timetz: withPrecision('time', '6', ' with time zone'),
};

function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}
