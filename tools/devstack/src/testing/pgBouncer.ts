import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { tailFile } from '../logTail.ts';
import { freePort } from '../ports.ts';
import { eventually } from './stack.ts';

/** Debian's `pgbouncer` package (apt-get install -y pgbouncer). */
const PGBOUNCER = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

export type PoolMode = 'session' | 'transaction';

export type PgBouncer = {
  port: number;
  poolMode: PoolMode;
  /** `databaseUrl` (a database on the server behind it) reached through the pooler instead. */
  urlFor(databaseUrl: string): string;
  /** Client connections it holds now, by database (its admin console's SHOW CLIENTS). */
  clientsByDatabase(): Promise<Map<string, number>>;
  stop(): Promise<void>;
};

/**
 * The startup parameters node-postgres sends that PgBouncer does not forward: it refuses a client
 * that sends one it was not told to ignore, and ignoring drops them. The processes' own settings
 * of them (statement and idle-in-transaction timeouts, the relay's planner options) are therefore
 * set on the databases behind it (docs/production.md, "Through PgBouncer").
 */
const IGNORED_STARTUP_PARAMETERS = [
  'extra_float_digits',
  'options',
  'statement_timeout',
  'idle_in_transaction_session_timeout',
] as const;

/** Its configuration and users file in `dir`, readable by the `postgres` user it may run as. */
function writeConfig(dir: string, server: URL, port: number, poolMode: PoolMode): string {
  chmodSync(dir, 0o777);
  const users = join(dir, 'users.txt');
  writeFileSync(users, '"postgres" ""\n');
  const config = join(dir, 'pgbouncer.ini');
  writeFileSync(
    config,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      'admin_users = postgres',
      `auth_file = ${users}`,
      `pool_mode = ${poolMode}`,
      'max_client_conn = 1000',
      'default_pool_size = 100',
      `ignore_startup_parameters = ${IGNORED_STARTUP_PARAMETERS.join(', ')}`,
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  chmodSync(users, 0o644);
  chmodSync(config, 0o644);
  return config;
}

/**
 * A private PgBouncer in front of the PostgreSQL server of `serverUrl`, on a free port, every
 * database passed through, trust authentication as the server has (user `postgres`), in
 * `poolMode`. It refuses to run as root, so as root it runs as `postgres`. Resolves once it answers.
 */
export async function startPgBouncer(serverUrl: string, poolMode: PoolMode): Promise<PgBouncer> {
  if (!existsSync(PGBOUNCER))
    throw new Error(
      `no PgBouncer at ${PGBOUNCER}: apt-get install -y pgbouncer (./dev test --long does), or set PGBOUNCER_BIN`,
    );
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  const config = writeConfig(dir, new URL(serverUrl), port, poolMode);
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = asRoot
    ? spawn('runuser', ['-u', 'postgres', '--', PGBOUNCER, config], { stdio: 'ignore' })
    : spawn(PGBOUNCER, [config], { stdio: 'ignore' });
  const urlFor = (databaseUrl: string) => {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    return url.toString();
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(`PgBouncer answering on ${port}`, async () => {
      // Its log is said here: the folder goes with stop().
      if (child.exitCode !== null)
        throw new Error(
          `pgbouncer exited with ${child.exitCode}:\n${tailFile(join(dir, 'pgbouncer.log'), 10) || '(no log)'}`,
        );
      const client = new pg.Client({ connectionString: urlFor(serverUrl) });
      client.on('error', () => {});
      return client
        .connect()
        .then(() => client.query('select 1'))
        .then(() => true)
        .catch(() => undefined)
        .finally(() => client.end().catch(() => {}));
    });
  } catch (err) {
    await stop();
    throw err;
  }
  const clientsByDatabase = async () => {
    // The admin console speaks the simple query protocol only: a query without parameters.
    const admin = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:${port}/pgbouncer` });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ database: string }>('show clients');
      const counts = new Map<string, number>();
      for (const { database } of rows) counts.set(database, (counts.get(database) ?? 0) + 1);
      return counts;
    } finally {
      await admin.end();
    }
  };
  return { port, poolMode, urlFor, clientsByDatabase, stop };
}
