import { runner } from 'node-pg-migrate';
import pg from 'pg';
import { PG_DUPLICATE_DATABASE } from './errors.ts';

/**
 * Numbered `.sql` files and the table that records which of them have run. The files may come from
 * several folders (the outbox's and the inbox's share one history): they run in file-name order.
 */
export type MigrationSet = { dir: string | readonly string[]; table: string };

/**
 * Create the database if it is missing, then apply each set's pending SQL migrations in order
 * (a service passes the shared outbox/inbox set first, then its own). Safe to run from several
 * processes at once: node-pg-migrate holds an advisory lock and skips files already applied.
 * Each set keeps its own history table, so the sets' numbering never has to interleave.
 */
export async function migrateDatabase(databaseUrl: string, sets: readonly MigrationSet[]): Promise<string[]> {
  await createDatabaseIfMissing(databaseUrl);
  const applied: string[] = [];
  for (const { dir, table } of sets) {
    const ran = await runner({
      databaseUrl,
      ...migrationFiles(dir),
      migrationsTable: table,
      direction: 'up',
      checkOrder: true,
      advisoryLockMode: 'wait',
      log: () => {},
    });
    applied.push(...ran.map((migration) => migration.name));
  }
  return applied;
}

/** node-pg-migrate reads one folder, or, with `useGlob`, any number of patterns sorted by file name. */
function migrationFiles(dir: MigrationSet['dir']): { dir: string | string[]; useGlob?: boolean } {
  return typeof dir === 'string' ? { dir } : { dir: dir.map((folder) => `${folder}/*.sql`), useGlob: true };
}

export async function createDatabaseIfMissing(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 0) {
      await client.query(`create database ${pg.escapeIdentifier(name)}`);
    }
  } catch (err) {
    if ((err as { code?: string }).code !== PG_DUPLICATE_DATABASE) throw err;
  } finally {
    await client.end();
  }
}
