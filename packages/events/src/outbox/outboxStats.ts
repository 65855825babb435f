import type pg from 'pg';

export type OutboxStats = {
  /** Unpublished rows by status (published rows are not counted: that would scan the table). */
  byStatus: Record<'pending' | 'in_flight' | 'failed', number>;
  /** Age of the oldest event not yet published (pending or in flight), 0 when there is none. */
  oldestUnpublishedSeconds: number;
};

const statsSql = `
  select status, count(*)::int as count,
         coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as oldest_seconds
    from outbox
   where status <> 'published'
   group by status`;

export async function outboxStats(db: pg.Pool | pg.ClientBase): Promise<OutboxStats> {
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
