// Column defaults: whether the database default is the one schema.prisma means, where the catalog
// can tell (client-side defaults need none; `now()`, `autoincrement()` and literals are checked).
import type { DbColumn } from './catalog.ts';
import type { DmmfDefault, DmmfEnum, DmmfField } from './prismaSchema.ts';

/** Prisma generates these defaults in the client; the database needs no default for them. */
const CLIENT_SIDE_DEFAULTS = new Set(['uuid', 'cuid', 'nanoid', 'ulid']);

export function compareDefault(
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
