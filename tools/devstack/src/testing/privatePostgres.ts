import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../ports.ts';
import { asOwner } from '../postgresPair.ts';

export type PrivatePostgres = {
  /** Admin URL (database `postgres`) of this server. */
  url: string;
  port: number;
  /** `pg_ctl restart -m immediate`: every backend dies at once, as in a crash; then crash recovery. */
  restartImmediately(): Promise<void>;
  remove(): Promise<void>;
};

type PrivatePostgresOptions = {
  /**
   * Start it as a standby with `hot_standby = off` and no primary: it runs but refuses every
   * connection with SQLSTATE 57P03 ("the database system is not accepting connections"), as any
   * server does while it starts up or recovers from a crash, for as long as the test needs.
   */
  refusingConnections?: boolean;
  /** `wal_level=logical`, for a CDC relay's replication slot (docs/design.md#polling-or-cdc). */
  logicalDecoding?: boolean;
};

/**
 * A PostgreSQL cluster of a test's own, in a temp dir, on a free port: restarting the shared
 * server would break every other test and anyone else using it. PostgreSQL refuses to run as
 * root, so when we are root the cluster belongs to the `postgres` user (`runuser`).
 */
export async function startPrivatePostgres(options: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'chaos-pg-'));
  chmodSync(dir, 0o777); // the postgres user creates the cluster inside it
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'postgres.log');
  const port = await freePort();
  const pgCtl = (...args: string[]) => asOwner('pg_ctl', ['-D', dataDir, '-w', '-t', '60', ...args]);

  await asOwner('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  let serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  if (options.logicalDecoding) serverOptions += ' -c wal_level=logical';
  if (options.refusingConnections) {
    // pg_ctl -w counts a standby as started; without hot standby it never accepts a connection.
    writeFileSync(join(dataDir, 'standby.signal'), '');
    serverOptions += ' -c hot_standby=off';
  }
  await pgCtl('-o', serverOptions, '-l', logFile, 'start');
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    restartImmediately: () => pgCtl('-o', serverOptions, '-l', logFile, '-m', 'immediate', 'restart'),
    remove: async () => {
      await pgCtl('-m', 'immediate', 'stop').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
