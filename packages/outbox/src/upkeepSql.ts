import type pg from 'pg';

/**
 * The outbox store's statements outside the relay's batches (OutboxStore, outboxStore.ts), each
 * beside the function that runs it: an operator's redrive of dead letters, the retention that
 * deletes published rows, and the counts the metrics, the console and the CLI read.
 */

type Db = pg.Pool | pg.ClientBase;

/** Dead-lettered events back in line after a fix: `pending`, due now, attempts reset. */
export const redriveSql = `
  update outbox
     set status = 'pending',
         attempts = 0,
         next_attempt_at = now(),
         last_error = null
   where status = 'failed'
     and ($1::uuid is null or id = $1::uuid)
     and ($2::text is null or event_type = $2)
  returning id`;

export type RedriveSelector = { id: string } | { eventType: string } | { all: true };

/** Returns the ids re-queued; only `failed` rows are touched. */
export async function redrive(db: Db, selector: RedriveSelector): Promise<string[]> {
  const id = 'id' in selector ? selector.id : null;
  const eventType = 'eventType' in selector ? selector.eventType : null;
  const { rows } = await db.query<{ id: string }>(redriveSql, [id, eventType]);
  return rows.map((row) => row.id);
}

/**
 * Retention: up to $2 events published longer than $1 ms ago. Small batches keep each delete
 * short (no long lock, no WAL spike); rows that are not published are never touched.
 */
export const deletePublishedSql = `
  delete from outbox
   where id in (
         select id
           from outbox
          where status = 'published'
            and published_at < now() - make_interval(secs => $1::bigint / 1000.0)
          limit $2
            for update skip locked)`;

/**
 * The caller repeats until fewer than `batchSize` rows come back. The retention is rounded to a
 * whole millisecond: hours times 3,600,000 in floating point (2.2 hours) fails the bigint cast.
 */
export async function deletePublished(db: Db, retentionMs: number, batchSize: number): Promise<number> {
  const { rowCount } = await db.query(deletePublishedSql, [Math.round(retentionMs), batchSize]);
  return rowCount ?? 0;
}

/** Unpublished rows only: counting published ones would scan the table. */
export const statsSql = `
  select status, count(*)::int as count,
         coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as oldest_seconds
    from outbox
   where status <> 'published'
   group by status`;

export type OutboxStats = {
  /** Unpublished rows by status. */
  byStatus: Record<'pending' | 'in_flight' | 'failed', number>;
  /** Age of the oldest event not yet published (pending or in flight), 0 when there is none. */
  oldestUnpublishedSeconds: number;
};

export async function outboxStats(db: Db): Promise<OutboxStats> {
  const { rows } = await db.query<{
    status: keyof OutboxStats['byStatus'];
    count: number;
    oldest_seconds: number;
  }>(statsSql);
  const byStatus = { pending: 0, in_flight: 0, failed: 0 };
  let oldest = 0;
  for (const row of rows) {
    byStatus[row.status] = row.count;
    if (row.status !== 'failed') oldest = Math.max(oldest, row.oldest_seconds);
  }
  return { byStatus, oldestUnpublishedSeconds: oldest };
}
