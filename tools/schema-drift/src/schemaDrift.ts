import { readFileSync } from 'node:fs';
import { readCatalog } from './catalog.ts';
import { compareSchema } from './compareSchema.ts';
import { parsePrismaSchema } from './prismaSchema.ts';

/**
 * Schema drift check: does a schema.prisma describe the database its SQL migrations build?
 *
 * The services' tables are created by plain SQL migrations (see docs/migrations.md), while their
 * code reads and writes them through a Prisma client generated from schema.prisma. Nothing ties the
 * two together except this check: it parses schema.prisma offline (Prisma's schema WASM, no engine
 * binary), reads the migrated database's catalog and lists every difference Prisma would care about.
 * An empty list means they are in step.
 *
 * Its parts, in the order they run: `prismaSchema.ts` (the Prisma side), `catalog.ts` (the database
 * side), `compareSchema.ts` with `compareDefault.ts` (the comparison).
 */

type SchemaDriftOptions = {
  /** Path of the schema.prisma to check. */
  schemaPath: string;
  /** A database the migrations have been applied to. */
  databaseUrl: string;
  /** Tables that exist in the database on purpose without a model (outbox, migration history…). */
  ignoreTables?: readonly string[];
};

export async function findSchemaDrift(options: SchemaDriftOptions): Promise<string[]> {
  const datamodel = parsePrismaSchema(readFileSync(options.schemaPath, 'utf8'), options.schemaPath);
  const catalog = await readCatalog(options.databaseUrl);
  return compareSchema(datamodel, catalog, { ignoreTables: options.ignoreTables ?? [] });
}

export type { DbCatalog, DbColumn, DbTable } from './catalog.ts';
export { compareSchema } from './compareSchema.ts';
export { parsePrismaSchema } from './prismaSchema.ts';
