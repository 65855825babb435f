import type pg from 'pg';

/**
 * Dead-letter an event: it will not be retried until an operator redrives it (redrive.ts).
 * The row stays in the outbox with its last error, so nothing is lost; later events of the same
 * aggregate wait behind it (see claimBatch.ts) rather than overtaking it.
 */
const markFailedSql = `
  update outbox
     set status = 'failed',
         lease_owner = null,
         lease_expires_at = null,
         last_error = $3
   where id = $1::uuid
     and lease_owner = $2`;

export async function markFailed(
  db: pg.Pool | pg.ClientBase,
  id: string,
  owner: string,
  error: string,
): Promise<boolean> {
  const { rowCount } = await db.query(markFailedSql, [id, owner, error.slice(0, 2000)]);
  return rowCount === 1;
}
