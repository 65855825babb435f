import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { localDir } from './paths.ts';
import { freePort } from './ports.ts';
import { withClient } from './postgresClient.ts';
import { type PrimaryEndpoint, startPrimaryEndpoint } from './primaryEndpoint.ts';
import { run, waitForExit } from './processes.ts';

/** Debian's PostgreSQL server binaries (`pg_config --bindir`): the npm embedded one has no pg_basebackup. */
export const BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';
/** What the standby calls itself to the primary (pg_stat_replication.application_name). */
const STANDBY_NAME = 'standby';

export type Replication = 'async' | 'sync';

/**
 * The pair's standby among the primary's walsenders: a logical reader (Debezium's connector on
 * a CDC outbox) is in pg_stat_replication too, and says nothing about the standby.
 */
const physicalStandbys = `select 1 from pg_stat_replication where application_name = '${STANDBY_NAME}'`;

/** One server of the pair, on its own port and data directory. */
export type PairNode = { port: number; dataDir: string; logFile: string };

export type PostgresPair = {
  /** Admin URL (database `postgres`) of the primary, through the endpoint: it follows a promotion. */
  url: string;
  endpoint: PrimaryEndpoint;
  readonly primary: PairNode;
  /** Undefined between a primary's death and the next rebuildStandby(). */
  readonly standby: PairNode | undefined;
  replication: Replication;
  /**
   * kill -9 of the primary's postmaster and every process of it, as a machine that dies: commits
   * not yet on the standby are gone with it. The endpoint refuses connections until promote().
   */
  killPrimary(): Promise<void>;
  /** `pg_ctl promote` of the standby; once it accepts writes the endpoint sends clients to it. */
  promote(): Promise<void>;
  /** A new standby of the current primary (the dead one's data removed, a fresh base backup). */
  rebuildStandby(): Promise<void>;
  /**
   * Stop (and resume) the standby's WAL receipt: its walreceiver is pointed at a port nobody
   * listens on, so every commit from now on exists on the primary only. Makes a failover's loss
   * certain rather than a matter of timing. Async replication only: a synchronous primary would
   * wait for the standby on every commit.
   */
  pauseReceipt(): Promise<void>;
  resumeReceipt(): Promise<void>;
  /** The standby's flush position as the primary sees it, and the primary's current position. */
  positions(): Promise<{ primaryLsn: string; standbyFlushLsn: string | null }>;
  remove(): Promise<void>;
};

type PostgresPairOptions = {
  /** Part of the data directory's name under .local/postgres-pair/. */
  label: string;
  /** `sync` sets synchronous_standby_names: a commit returns once the standby flushed it. Default async. */
  replication?: Replication;
};

/**
 * A primary and a streaming standby of the machine's PostgreSQL 15, both private clusters on free
 * ports under `.local/postgres-pair/` (never the server on 5432), with one endpoint for "the
 * primary" that a promotion moves. Started without Docker: initdb, pg_basebackup, pg_ctl.
 * PostgreSQL refuses to run as root, so when we are root the clusters belong to `postgres`.
 */
export async function startPostgresPair(options: PostgresPairOptions): Promise<PostgresPair> {
  const replication = options.replication ?? 'async';
  const dir = join(localDir, 'postgres-pair', `${options.label}-${randomBytes(3).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o777); // the postgres user creates the clusters inside it

  let primary = await newNode(dir, 'a');
  let standby: PairNode | undefined = await newNode(dir, 'b');
  await asOwner('initdb', ['-D', primary.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  await startNode(dir, primary);
  await makeStandby(dir, replication, primary, standby);
  const endpoint = await startPrimaryEndpoint(primary.port);
  let dead: PairNode | undefined;

  const pair: PostgresPair = {
    url: `postgresql://postgres@127.0.0.1:${endpoint.port}/postgres`,
    endpoint,
    get primary() {
      return primary;
    },
    get standby() {
      return standby;
    },
    replication,
    killPrimary: async () => {
      const pid = postmasterPid(primary);
      await killWithChildren(pid);
      endpoint.switchTo(undefined);
      await waitForExit(pid, 10_000);
      dead = primary;
    },
    promote: async () => {
      if (!standby) throw new Error('no standby to promote');
      // Promoted beside a live primary, the standby would be a second primary, and the old one a
      // server nobody tracks or stops: a failover starts with the primary gone.
      if (!dead) throw new Error('the primary is alive: kill it before promoting the standby');
      const promoted = standby;
      await promoteNode(promoted);
      primary = promoted;
      standby = undefined;
      endpoint.switchTo(primary.port);
    },
    rebuildStandby: async () => {
      // The dead node on a new port: its killed postmaster's socket lock names a pid that may live
      // on as a zombie nobody reaps (a container's init), and PostgreSQL then refuses that socket.
      const next = dead ? { ...dead, port: await freePort() } : await newNode(dir, `s${Date.now()}`);
      dead = undefined;
      standby = next;
      await makeStandby(dir, replication, primary, next);
    },
    pauseReceipt: async () => {
      if (!standby) throw new Error('no standby');
      await streamFrom(standby, await freePort());
      await waitFor('the standby to stop receiving', async () => {
        const rows = await query(primary, physicalStandbys);
        return rows.length === 0;
      });
    },
    resumeReceipt: async () => {
      if (!standby) throw new Error('no standby');
      await streamFrom(standby, primary.port);
    },
    positions: () => positionsOf(primary),
    remove: async () => {
      await endpoint.close();
      for (const n of [primary, standby]) {
        if (n) await pgCtl(n, '-m', 'immediate', 'stop').catch(() => {});
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return pair;
}

/**
 * One of the machine's PostgreSQL tools (initdb, pg_ctl, pg_basebackup) on a private cluster. It
 * refuses to run as root, so as root it runs as the clusters' owner, `postgres`.
 */
export async function asOwner(tool: string, args: string[]): Promise<void> {
  const isRoot = process.getuid?.() === 0;
  const [command, commandArgs] = isRoot
    ? ['runuser', ['-u', 'postgres', '--', join(BIN, tool), ...args]]
    : [join(BIN, tool), args];
  await run(command, commandArgs, { timeout: 120_000 });
}

async function newNode(dir: string, name: string): Promise<PairNode> {
  return { port: await freePort(), dataDir: join(dir, name), logFile: join(dir, `${name}.log`) };
}

const serverOptions = (dir: string, n: PairNode) =>
  // wal_level=logical: a CDC relay's slot can live on the pair. fsync stays on: a kill -9 must
  // lose exactly what a real crash loses, and nothing the standby flushed.
  `-p ${n.port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200 -c wal_level=logical` +
  ' -c wal_sender_timeout=5s -c wal_receiver_status_interval=1s -c hot_standby_feedback=on';

const pgCtl = (n: PairNode, ...args: string[]) =>
  asOwner('pg_ctl', ['-D', n.dataDir, '-w', '-t', '60', ...args]);

/**
 * Starts a node. A port taken between freePort() and the server's bind, or a socket lock left by
 * a killed postmaster, fails the start: it is tried again on a new port, and the last failure
 * says why from the server's own log.
 */
async function startNode(dir: string, n: PairNode): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await pgCtl(n, '-o', serverOptions(dir, n), '-l', n.logFile, 'start');
      return;
    } catch (error) {
      const log = existsSync(n.logFile) ? readFileSync(n.logFile, 'utf8').trim().split('\n').slice(-8) : [];
      if (attempt >= 3)
        throw new Error(`${(error as Error).message}\n${n.logFile}:\n${log.join('\n')}`, { cause: error });
      n.port = await freePort();
    }
  }
}

const query = (n: PairNode, sql: string) => {
  const url = `postgresql://postgres@127.0.0.1:${n.port}/postgres`;
  return withClient(url, async (client) => (await client.query(sql)).rows, {
    connectionTimeoutMillis: 5_000,
  });
};

const conninfo = (primaryPort: number) =>
  `host=127.0.0.1 port=${primaryPort} user=postgres application_name=${STANDBY_NAME}`;

/** A standby of `from`: a base backup, standby.signal, and where to stream from. */
async function makeStandby(
  dir: string,
  replication: Replication,
  from: PairNode,
  n: PairNode,
): Promise<void> {
  rmSync(n.dataDir, { recursive: true, force: true });
  const source = ['-h', '127.0.0.1', '-p', String(from.port), '-U', 'postgres'];
  await asOwner('pg_basebackup', [...source, '-D', n.dataDir, '-X', 'stream', '-c', 'fast']);
  writeFileSync(join(n.dataDir, 'standby.signal'), '');
  // Replaces what the backup copied (a synchronous_standby_names set on the primary included).
  writeFileSync(join(n.dataDir, 'postgresql.auto.conf'), `primary_conninfo = '${conninfo(from.port)}'\n`);
  if (process.getuid?.() === 0) await run('chown', ['-R', 'postgres:postgres', n.dataDir]);
  await startNode(dir, n);
  await waitFor(`the standby on ${n.port} streaming from ${from.port}`, async () => {
    const rows = await query(from, `${physicalStandbys} and state = 'streaming'`);
    return rows.length > 0;
  });
  const names = replication === 'sync' ? STANDBY_NAME : '';
  await query(from, `alter system set synchronous_standby_names = '${names}'`);
  await query(from, 'select pg_reload_conf()');
}

/** Points the standby's walreceiver at `port`: the primary's, or one nobody listens on. */
async function streamFrom(standby: PairNode, port: number): Promise<void> {
  await query(standby, `alter system set primary_conninfo = '${conninfo(port)}'`);
  await query(standby, 'select pg_reload_conf()');
}

/** `pg_ctl promote`, then wait until the node accepts writes. */
async function promoteNode(standby: PairNode): Promise<void> {
  await pgCtl(standby, 'promote');
  await waitFor(`the standby on ${standby.port} accepting writes`, async () => {
    const [row] = await query(standby, 'select pg_is_in_recovery() as recovering');
    return row?.recovering === false;
  });
  // Async until a new standby is there: a synchronous primary without one would block every commit.
  await query(standby, `alter system set synchronous_standby_names = ''`);
  await query(standby, 'select pg_reload_conf()');
}

const postmasterPid = (n: PairNode) =>
  Number.parseInt(readFileSync(join(n.dataDir, 'postmaster.pid'), 'utf8'), 10);

/** SIGKILL to a postmaster and every process it started, as a machine that dies. */
async function killWithChildren(pid: number): Promise<void> {
  const children = await run('ps', ['-o', 'pid=', '--ppid', String(pid)]).then(
    ({ stdout }) => stdout.split('\n').flatMap((line) => (line.trim() ? [Number(line)] : [])),
    () => [],
  );
  for (const each of [pid, ...children]) {
    try {
      process.kill(each, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

async function positionsOf(primary: PairNode) {
  const [row] = await query(
    primary,
    `select pg_current_wal_lsn()::text as primary_lsn,
            (select max(flush_lsn)::text from pg_stat_replication
              where application_name = '${STANDBY_NAME}') as standby_flush_lsn`,
  );
  return { primaryLsn: row?.primary_lsn, standbyFlushLsn: row?.standby_flush_lsn ?? null };
}

async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}
