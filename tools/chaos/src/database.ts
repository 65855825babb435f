import { randomBytes } from 'node:crypto';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import pg from 'pg';

/** The PostgreSQL server the chaos suite uses unless a scenario runs a private one. */
export const defaultPostgresUrl =
  process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export type ScenarioDatabase = { name: string; url: string; drop(): Promise<void> };

/** PostgreSQL keeps the first 63 bytes of a name (NAMEDATALEN - 1) and drops the rest without an error. */
const MAX_NAME_BYTES = 63;

/**
 * `chaos_<label>_<service>_<random>`, cut in the label so that it fits: a longer name is cut by the
 * server, in the middle of the service or the random part, and no longer matches the name clients
 * are given. Connecting still works (the server cuts that name too), but Debezium looks its
 * replication slot up by `database.dbname` against pg_replication_slots.database, never finds it, and
 * creates it again, which fails with "already exists".
 */
export function databaseName(label: string, service: string, random: string): string {
  const slug = (text: string) => text.replace(/[^a-z0-9]+/gi, '_').toLowerCase();
  const tail = `_${slug(service)}_${random}`;
  return `chaos_${slug(label).slice(0, MAX_NAME_BYTES - 'chaos_'.length - tail.length)}${tail}`;
}

/**
 * A fresh, empty database for one service on the given server (`databaseName`). The service that
 * owns it migrates it at start, as in production. KEEP_TEST_DATABASES=1 keeps it for inspection.
 */
export async function createDatabase(
  serverUrl: string,
  label: string,
  service: string,
): Promise<ScenarioDatabase> {
  const name = databaseName(label, service, randomBytes(3).toString('hex'));
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
