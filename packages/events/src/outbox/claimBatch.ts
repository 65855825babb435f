import type pg from 'pg';
import type { OutboxRow } from './outboxRow.ts';

/**
 * Claim up to `limit` due events in one statement and lease them to `owner`.
 *
 * Due: pending and past its backoff, or in flight under a lease that expired (its relay died).
 *
 * Ordered: an event is claimable only when it is the head of its aggregate, the lowest `seq` not
 * yet published. So at most one event per aggregate is in flight at any time, whichever relay
 * holds it; a retry or a dead-lettered event holds back the later events of its own aggregate,
 * and nothing else. This is safe under concurrency without further locking: another relay's
 * concurrent claim can only make an earlier event look *unpublished* to this statement, which
 * holds ours back.
 *
 * Written as `seq = (select min(seq) ...)`, not as `not exists (an earlier unpublished event)`:
 * the same rows qualify, but the min() is one probe of outbox_aggregate_idx per candidate
 * whatever the planner's statistics say, while the NOT EXISTS anti-join degraded to scanning
 * that whole index per candidate when statistics were stale (as after an outage drained a
 * backlog): 11-13x slower claims then, 1.5-2.2x with fresh statistics (bench/relay-throughput.ts,
 * claim probe; docs/benchmarks.md).
 *
 * FOR UPDATE SKIP LOCKED lets relays claim side by side without waiting for each other; the row
 * locks end with this statement, and the lease keeps other relays away while this one publishes.
 */
const claimDue = `
  with claimable as (
    select o.id, o.status as previous_status
      from outbox o
     where ((o.status = 'pending' and o.next_attempt_at <= now())
         or (o.status = 'in_flight' and o.lease_expires_at < now()))
       and o.seq = (
             select min(head.seq)
               from outbox head
              where head.aggregate_type = o.aggregate_type
                and head.aggregate_id = o.aggregate_id
                and head.status <> 'published')
     order by o.seq
     limit $3
       for update of o skip locked)
  update outbox o
     set status = 'in_flight',
         lease_owner = $1,
         lease_expires_at = now() + make_interval(secs => $2::int / 1000.0),
         attempts = o.attempts + 1
    from claimable
   where o.id = claimable.id
  returning o.id, o.seq, o.source, o.aggregate_type, o.aggregate_id, o.event_type, o.schema_version,
            o.payload, o.headers, o.attempts, o.created_at,
            claimable.previous_status = 'in_flight' as lease_expired`;

export type ClaimedRow = OutboxRow & {
  /** Taken over from a relay whose lease expired: it may have reached the broker already. */
  lease_expired: boolean;
};

export async function claimBatch(
  db: pg.Pool | pg.ClientBase,
  owner: string,
  leaseMs: number,
  limit: number,
): Promise<ClaimedRow[]> {
  const { rows } = await db.query<ClaimedRow>(claimDue, [owner, leaseMs, limit]);
  // UPDATE ... RETURNING does not keep the subquery's order.
  return rows.sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq)));
}
