import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@outbox/devstack/ports';

const run = promisify(execFile);
const BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';

export type PrivatePostgres = {
  /** Admin URL (database `postgres`) of this server. */
  url: string;
  port: number;
  /** `pg_ctl restart -m immediate`: every backend dies at once, as in a crash; then crash recovery. */
  restartImmediately(): Promise<void>;
  remove(): Promise<void>;
};

/**
 * A PostgreSQL cluster of the scenario's own, in a temp dir, on a free port: restarting the
 * shared server would break every other test and anyone else using it. PostgreSQL refuses to run
 * as root, so when we are root the cluster belongs to the `postgres` user (`runuser`).
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'chaos-pg-'));
  chmodSync(dir, 0o777); // the postgres user creates the cluster inside it
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'postgres.log');
  const port = await freePort();
  const asOwner = async (tool: string, args: string[]) => {
    const isRoot = process.getuid?.() === 0;
    const [command, commandArgs] = isRoot
      ? ['runuser', ['-u', 'postgres', '--', join(BIN, tool), ...args]]
      : [join(BIN, tool), args];
    await run(command, commandArgs, { timeout: 60_000 });
  };
  const pgCtl = (...args: string[]) => asOwner('pg_ctl', ['-D', dataDir, '-w', '-t', '60', ...args]);

  await asOwner('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  await pgCtl('-o', options, '-l', logFile, 'start');
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    restartImmediately: () => pgCtl('-o', options, '-l', logFile, '-m', 'immediate', 'restart'),
    remove: async () => {
      await pgCtl('-m', 'immediate', 'stop').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
