import type pg from 'pg';

/**
 * The outbox store's other ends of a lease (OutboxStore, outboxStore.ts), each statement beside the
 * function that runs it: a relay keeps its rows while the broker has them (renew), gives them back
 * to wait for a retry, or dead-letters one. Every statement is fenced by `lease_owner = $owner`: a
 * relay whose lease expired (and whose rows another relay took over) cannot overwrite the newer
 * owner's state. Each function returns what it really changed, so callers count only that.
 */

type Db = pg.Pool | pg.ClientBase;

/** Keep a slow publish's rows ours: push the lease out again while the broker has them. */
export const renewLeasesSql = `
  update outbox
     set lease_expires_at = now() + make_interval(secs => $3::int / 1000.0)
   where id = any($1::uuid[])
     and lease_owner = $2
     and status = 'in_flight'`;

/** A hot statement, prepared as the claim's are (preparedStatementNames, outboxStore.ts). */
export const RENEW_LEASES_STATEMENT = 'outbox_renew_leases';

export async function renewLeases(db: Db, ids: string[], owner: string, leaseMs: number): Promise<number> {
  const { rowCount } = await db.query({
    name: RENEW_LEASES_STATEMENT,
    text: renewLeasesSql,
    values: [ids, owner, Math.round(leaseMs)],
  });
  return rowCount ?? 0;
}

/**
 * Back to `pending`, due after $4 ms, the error kept for operators. $5 false refunds the attempt
 * the claim counted: used when the broker was unreachable, which says nothing about the events,
 * so a long outage never dead-letters healthy events.
 */
export const scheduleRetrySql = `
  update outbox
     set status = 'pending',
         lease_owner = null,
         lease_expires_at = null,
         last_error = $3,
         next_attempt_at = now() + make_interval(secs => $4::int / 1000.0),
         attempts = attempts - (case when $5::boolean then 0 else 1 end)
   where id = any($1::uuid[])
     and lease_owner = $2`;

export async function scheduleRetry(
  db: Db,
  ids: string[],
  owner: string,
  retry: { error: string; delayMs: number; countAttempt: boolean },
): Promise<number> {
  const { rowCount } = await db.query(scheduleRetrySql, [
    ids,
    owner,
    retry.error.slice(0, 2000),
    Math.round(retry.delayMs),
    retry.countAttempt,
  ]);
  return rowCount ?? 0;
}

/**
 * Dead-letter: not retried until an operator redrives it (upkeepSql.ts). The row stays with its
 * last error, so nothing is lost; later events of the same aggregate wait behind it rather than
 * overtaking it.
 */
export const markFailedSql = `
  update outbox
     set status = 'failed',
         lease_owner = null,
         lease_expires_at = null,
         last_error = $3
   where id = $1::uuid
     and lease_owner = $2`;

export async function markFailed(db: Db, id: string, owner: string, error: string): Promise<boolean> {
  const { rowCount } = await db.query(markFailedSql, [id, owner, error.slice(0, 2000)]);
  return rowCount === 1;
}
