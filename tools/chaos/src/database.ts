import { randomBytes } from 'node:crypto';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import pg from 'pg';

/** The PostgreSQL server the chaos suite uses unless a scenario runs a private one. */
export const defaultPostgresUrl =
  process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export type ScenarioDatabase = { name: string; url: string; drop(): Promise<void> };

/**
 * A fresh, empty database on the given server (`chaos_<label>_<random>`). The service that owns
 * it migrates it at start, as in production. KEEP_TEST_DATABASES=1 keeps it for inspection.
 */
export async function createDatabase(serverUrl: string, label: string): Promise<ScenarioDatabase> {
  const name = `chaos_${label.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}_${randomBytes(3).toString('hex')}`;
  await queryOnce(serverUrl, `create database ${pg.escapeIdentifier(name)}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      if (process.env.KEEP_TEST_DATABASES === '1') return;
      await queryOnce(serverUrl, `drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    },
  };
}

/** The same database under another application_name, so pg_stat_activity tells its clients apart. */
export function withApplicationName(url: string, applicationName: string): string {
  const withName = new URL(url);
  withName.searchParams.set('application_name', applicationName);
  return withName.toString();
}
