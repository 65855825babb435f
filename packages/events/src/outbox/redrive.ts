import type pg from 'pg';

export type RedriveSelector = { id: string } | { eventType: string } | { all: true };

/**
 * Put dead-lettered events back in line: `pending`, due now, attempts reset. Use it after fixing
 * what made them fail. Returns the ids re-queued. Only `failed` rows are touched.
 */
const redriveSql = `
  update outbox
     set status = 'pending',
         attempts = 0,
         next_attempt_at = now(),
         last_error = null
   where status = 'failed'
     and ($1::uuid is null or id = $1::uuid)
     and ($2::text is null or event_type = $2)
  returning id`;

export async function redrive(db: pg.Pool | pg.ClientBase, selector: RedriveSelector): Promise<string[]> {
  const id = 'id' in selector ? selector.id : null;
  const eventType = 'eventType' in selector ? selector.eventType : null;
  const { rows } = await db.query<{ id: string }>(redriveSql, [id, eventType]);
  return rows.map((row) => row.id);
}
