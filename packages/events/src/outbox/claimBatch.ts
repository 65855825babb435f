import type pg from 'pg';
import { type OutboxRow, outboxRowColumns } from './outboxRow.ts';

/**
 * Claim up to `limit` due events in one statement and lease them to `owner`.
 * FOR UPDATE SKIP LOCKED lets any number of relays claim at once without waiting on each other;
 * the row locks last only for this statement, and the lease (owner + expiry) is what keeps other
 * relays away while this one talks to Kafka. A row whose lease expired (its relay crashed) is
 * due again, so a crash never strands an event.
 */
const claimDue = `
  update outbox
     set status = 'in_flight',
         lease_owner = $1,
         lease_expires_at = now() + make_interval(secs => $2::int / 1000.0),
         attempts = attempts + 1
   where id in (
         select id
           from outbox
          where (status = 'pending' and next_attempt_at <= now())
             or (status = 'in_flight' and lease_expires_at < now())
          order by seq
          limit $3
            for update skip locked)
  returning ${outboxRowColumns}`;

export async function claimBatch(
  db: pg.Pool | pg.ClientBase,
  owner: string,
  leaseMs: number,
  limit: number,
): Promise<OutboxRow[]> {
  const { rows } = await db.query<OutboxRow>(claimDue, [owner, leaseMs, limit]);
  // UPDATE ... RETURNING does not keep the subquery's order.
  return rows.sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq)));
}
