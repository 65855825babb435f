/**
 * PostgreSQL's CPU split by who asked for it: the stack's backends grouped by their client's
 * application_name (the chaos stack names each connection after its process), and the whole
 * server, so the work no client asked for directly (WAL writer, checkpointer, autovacuum workers
 * that came and went) shows as the difference.
 */
import { readFileSync } from 'node:fs';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { procTicks, TICKS_PER_SECOND } from '../support/cpu.ts';

/** Fields of /proc/<pid>/stat after the command: ppid, and the reaped children's cutime + cstime. */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU ticks of every process of the server so far, the children it reaped included. */
function serverTicks(postmaster: number): number {
  const fields = statFields(postmaster);
  const reaped = Number(fields[13]) + Number(fields[14]);
  let live = procTicks(postmaster);
  for (const entry of readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8').split(' ')) {
    const ticks = entry.trim() ? procTicks(Number(entry)) : Number.NaN;
    if (Number.isFinite(ticks)) live += ticks;
  }
  return live + reaped;
}

type Snapshot = { backends: Map<number, number>; server: number };

export type PostgresClients = {
  snapshot(): Snapshot;
  /** CPU ms per order between two snapshots, per client and for the whole server (`server`). */
  msPerOrder(before: Snapshot, after: Snapshot, orders: number): Record<string, number>;
};

/** The stack's backends as they are now, by client, and the server they belong to. */
export async function postgresClients(postgresUrl: string, databases: string[]): Promise<PostgresClients> {
  const rows = await queryOnce<{ pid: number; client: string }>(
    postgresUrl,
    `select pid, coalesce(nullif(application_name, ''), backend_type) as client
       from pg_stat_activity where datname = any($1)`,
    [databases],
  );
  const postmaster = rows[0] ? Number(statFields(rows[0].pid)[1]) : Number.NaN;
  const msPer = (ticks: number, orders: number) =>
    Number(((ticks * 1000) / TICKS_PER_SECOND / Math.max(1, orders)).toFixed(3));
  return {
    snapshot: () => ({
      backends: new Map(rows.map(({ pid }) => [pid, procTicks(pid)])),
      server: Number.isFinite(postmaster) ? serverTicks(postmaster) : Number.NaN,
    }),
    msPerOrder(before, after, orders) {
      const ticks: Record<string, number> = {};
      for (const { pid, client } of rows) {
        // A backend that ended meanwhile reads NaN and counts nothing (the server's figure has it).
        const grown = (after.backends.get(pid) ?? Number.NaN) - (before.backends.get(pid) ?? Number.NaN);
        ticks[client] = (ticks[client] ?? 0) + (Number.isFinite(grown) ? grown : 0);
      }
      const perOrder = Object.fromEntries(
        Object.entries(ticks)
          .sort(([, a], [, b]) => b - a)
          .map(([client, t]) => [client, msPer(t, orders)]),
      );
      return { ...perOrder, server: msPer(after.server - before.server, orders) };
    },
  };
}
