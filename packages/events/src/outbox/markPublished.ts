import type pg from 'pg';

/**
 * Mark a batch published, after the broker acknowledged it. One statement for the whole batch.
 * `lease_owner = $2` makes a relay whose lease expired (and whose rows another relay took over)
 * unable to overwrite the newer owner's state.
 */
const markPublishedSql = `
  update outbox
     set status = 'published',
         published_at = now(),
         lease_owner = null,
         lease_expires_at = null,
         last_error = null
   where id = any($1::uuid[])
     and lease_owner = $2`;

export async function markPublished(
  db: pg.Pool | pg.ClientBase,
  ids: string[],
  owner: string,
): Promise<number> {
  const { rowCount } = await db.query(markPublishedSql, [ids, owner]);
  return rowCount ?? 0;
}
