import type pg from 'pg';

/**
 * Give leased events back for a later attempt: `pending` again, due after `delayMs`, with the
 * error kept for operators. `countAttempt: false` refunds the attempt the claim counted: used
 * when the broker was unreachable, which says nothing about the events themselves, so a long
 * outage never dead-letters healthy events.
 */
const scheduleRetrySql = `
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
  db: pg.Pool | pg.ClientBase,
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
