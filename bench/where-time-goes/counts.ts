/** What a where-time-goes run counts besides CPU: statements by family, and transactions per database. */
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { postgresUrl } from '../support/stack.ts';

/** The families other code reads by name: the relays' claims, and the consumers' inbox inserts. */
export const FAMILY = {
  markWithNextClaim: 'relay: mark with the next claim',
  claim: 'relay: claim',
  inbox: 'services: inbox (processed_events)',
} as const;

/**
 * A statement's family, from its text as pg_stat_statements normalizes it: the relay's outbox
 * statements one by one (claimSql.ts, outboxStore.ts), then what every service runs. SQL, so it
 * reads the whole text (the report keeps only its first 140 characters).
 */
export const statementFamilySql = `case
    when s.query ~* 'with marked as' and s.query ~* 'candidates as' then '${FAMILY.markWithNextClaim}'
    when s.query ~* 'with marked as' then 'relay: mark alone'
    when s.query ~* 'candidates as' then '${FAMILY.claim}'
    when s.query ~* 'set lease_expires_at = now' then 'relay: lease renewal'
    when s.query ~* 'update outbox' then 'relay: retry, dead letter, redrive'
    when s.query ~* 'from outbox' then 'relay: stats and retention'
    when s.query ~* '^\\s*(begin|commit|rollback)' then 'transaction control (begin, commit, rollback)'
    when s.query ~* 'insert into "?(public"\\.")?outbox' then 'services: outbox insert'
    when s.query ~* 'processed_events' then '${FAMILY.inbox}'
    when s.query ~* 'listen|pg_notify' then 'listen, notify'
    else 'services: their own rows'
  end`;

/** Calls per order of each family, largest first. */
export function familiesPerOrder(
  statements: { family: string; calls: number }[],
  accepted: number,
): { family: string; perOrder: number }[] {
  const calls = new Map<string, number>();
  for (const s of statements) calls.set(s.family, (calls.get(s.family) ?? 0) + s.calls);
  return [...calls]
    .map(([family, n]) => ({ family, perOrder: Number((n / Math.max(1, accepted)).toFixed(3)) }))
    .sort((a, b) => b.perOrder - a.perOrder);
}

/**
 * Transactions each database has ended so far (pg_stat_database: xact_commit + xact_rollback), by
 * the short name the statements table uses. The statistics system takes a backend's counts at most
 * every second (an idle backend's within 10 s), so a window's difference is approximate at its ends.
 */
export async function transactionsSoFar(names: string[]): Promise<Record<string, number>> {
  const rows = await queryOnce<{ database: string; commits: string; rollbacks: string }>(
    postgresUrl,
    `select regexp_replace(datname, '^chaos_wtg_([a-z]+)_.*$', '\\1') as database,
            xact_commit::text as commits, xact_rollback::text as rollbacks
       from pg_stat_database where datname = any($1)`,
    [names],
  );
  return Object.fromEntries(rows.map((row) => [row.database, Number(row.commits) + Number(row.rollbacks)]));
}

/** Per database and in all, the transactions ended between two readings, per accepted order. */
export function transactionsPerOrder(
  before: Record<string, number>,
  after: Record<string, number>,
  accepted: number,
): Record<string, number> {
  const per: Record<string, number> = {};
  let all = 0;
  for (const [database, end] of Object.entries(after)) {
    const grown = end - (before[database] ?? end);
    all += grown;
    per[database] = Number((grown / Math.max(1, accepted)).toFixed(3));
  }
  per.all = Number((all / Math.max(1, accepted)).toFixed(3));
  return per;
}
