import type pg from 'pg';

/**
 * Give leased events back for a later attempt after a failed publish: `pending` again, due after
 * `delayMs`, with the error kept for operators.
 */
const scheduleRetrySql = `
  update outbox
     set status = 'pending',
         lease_owner = null,
         lease_expires_at = null,
         last_error = $3,
         next_attempt_at = now() + make_interval(secs => $4::int / 1000.0)
   where id = any($1::uuid[])
     and lease_owner = $2`;

export async function scheduleRetry(
  db: pg.Pool | pg.ClientBase,
  ids: string[],
  owner: string,
  error: string,
  delayMs: number,
): Promise<number> {
  const { rowCount } = await db.query(scheduleRetrySql, [ids, owner, error.slice(0, 2000), delayMs]);
  return rowCount ?? 0;
}
