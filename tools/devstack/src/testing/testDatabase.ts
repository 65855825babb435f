import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { queryOnce } from '../postgresClient.ts';
import { eventually } from '../processes.ts';

export { queryOnce };

/** The PostgreSQL server tests use; every test file creates its own databases on it. */
export const testPostgresUrl =
  process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export type TestDatabase = { name: string; url: string; drop(): Promise<void> };

/**
 * A fresh, empty database named after the test file (`t_<label>_<random>`), so test files can
 * run in parallel without seeing each other's rows. The caller migrates it (usually by starting
 * the service with MIGRATE_ON_START, exactly as in production). Set KEEP_TEST_DATABASES=1 to
 * keep them for inspection after a run.
 */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `t_${label.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`create database ${pg.escapeIdentifier(name)}`);
  const url = new URL(testPostgresUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      if (process.env.KEEP_TEST_DATABASES === '1') return;
      await untilDisconnected(name, 5_000);
      await adminQuery(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    },
  };
}

const adminQuery = (sql: string, values: unknown[] = []) => queryOnce(testPostgresUrl, sql, values);

/**
 * Wait (up to `timeoutMs`) until nobody is connected to the database. A pool's end() can resolve
 * while its last client is still closing; a forced drop would then terminate that client after its
 * error listener is gone, an uncaught error in the test file. Whatever still holds on after the
 * wait (a process the test leaked) is terminated by the forced drop.
 */
async function untilDisconnected(name: string, timeoutMs: number): Promise<void> {
  const sql = 'select count(*)::int as connected from pg_stat_activity where datname = $1';
  const nobody = async () => (await adminQuery(sql, [name]))[0]?.connected === 0 || undefined;
  await eventually(`nobody connected to ${name}`, nobody, timeoutMs, 50).catch(() => {});
}
