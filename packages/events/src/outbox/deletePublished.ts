import type pg from 'pg';

/**
 * Retention: delete up to `batchSize` events published longer than `retentionMs` ago. Small
 * batches keep each delete short (no long lock, no WAL spike); the caller repeats until fewer
 * than `batchSize` rows come back. Rows that are not published are never touched.
 */
const deletePublishedSql = `
  delete from outbox
   where id in (
         select id
           from outbox
          where status = 'published'
            and published_at < now() - make_interval(secs => $1::bigint / 1000.0)
          limit $2
            for update skip locked)`;

export async function deletePublished(
  db: pg.Pool | pg.ClientBase,
  retentionMs: number,
  batchSize: number,
): Promise<number> {
  const { rowCount } = await db.query(deletePublishedSql, [retentionMs, batchSize]);
  return rowCount ?? 0;
}
