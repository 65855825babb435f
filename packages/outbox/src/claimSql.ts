import { CUSTOM_PLANS } from '@outbox/runtime/database';
import type pg from 'pg';
import type { ClaimedRow } from './outboxRow.ts';

/**
 * The outbox store's claim and mark (OutboxStore, outboxStore.ts): the statements that decide
 * per-aggregate order, each beside the function that runs it, and the session settings they need.
 * pending ─claim─▶ in_flight ─mark─▶ published; the mark also tells the relay what it unblocked.
 */

type Db = pg.Pool | pg.ClientBase;

/** The names these statements are prepared under (preparedStatementNames, outboxStore.ts). */
export const claimStatementNames = {
  claim: 'outbox_claim',
  markPublished: 'outbox_mark_published',
  markAndClaim: 'outbox_mark_and_claim',
} as const;

/** UPDATE ... RETURNING does not keep the subquery's order: the functions sort what they claimed. */
const bySeq = (a: ClaimedRow, b: ClaimedRow) => Number(BigInt(a.seq) - BigInt(b.seq));

/**
 * The session settings of a connection that runs these statements (the relay's pool, as libpq
 * `options`). Besides custom plans (see CUSTOM_PLANS), no bitmap scans: the claim must walk
 * `outbox_claimable_idx` in `seq` order and stop at its limit. A plain index scan marks the entries
 * of rows published since as dead while it passes them, so the next claims skip them and the index
 * reclaims their space; a bitmap scan, which the planner prefers when it expects few due rows,
 * never does, and until a vacuum every claim reads the heap page of every row published since
 * (docs/performance.md, "Round three: the claim on a grown outbox"). The relay's other statements lose nothing:
 * they look rows up by key.
 */
export const OUTBOX_SESSION_OPTIONS = `${CUSTOM_PLANS} -c enable_bitmapscan=off`;

/**
 * claim — up to $3 due events in one statement, leased to $1 for $2 ms, in `seq` order.
 * Due: pending and past its backoff, or in flight under a lease that expired (its relay died).
 * Ordered: an aggregate's events go out in `seq` order, and one relay at a time holds any of them.
 * A claim takes a run of an aggregate's events from its head (its lowest unpublished `seq`), as
 * many as fit in the batch, or extends a run that this relay has in hand ($4: the ids of the batch
 * it is delivering while it claims the next). The relay sends the next batch only once the broker
 * acknowledged that one, and gives back the next batch's events of any aggregate that did not all
 * go out (apps/relay/src/engine/relay.ts), so the extension follows the run on its partition.
 * Anything else that is unpublished ends a run: an event in flight under another relay's live
 * lease (or under this relay's, if it is not in hand: an outcome it failed to write), one waiting
 * for its retry, a dead-lettered one, or one another relay's concurrent claim has locked. So a
 * retry or a dead letter holds back the later events of its own aggregate, and two relays never
 * interleave one aggregate (docs/design.md, "The relay").
 *
 * Two steps, because FOR UPDATE SKIP LOCKED decides which rows are ours only as it locks them:
 * - candidates: due rows whose aggregate's head is due or in hand, walked along
 *   outbox_claimable_idx in `seq` order and locked (rows another claim holds are skipped); the
 *   head is one probe of outbox_aggregate_idx per row, whatever the statistics;
 * - runs: per aggregate, the first unpublished event that is neither a candidate nor in hand (a
 *   short walk of outbox_aggregate_idx from the head, once per aggregate: `materialized`, or the
 *   planner inlines it and walks the run again for every candidate); only candidates before it
 *   are claimed.
 *   Its subquery reads the statement's snapshot, where a concurrent claim's rows look unpublished
 *   and never candidates: a race can only shorten a run, never let two relays share an
 *   aggregate. The candidates dropped here are unlocked when the statement ends.
 */
// The claim's parts, shared with markAndClaim (below); `notMarking` keeps the rows a folded
// mark updates out of the candidates.
const claimCtes = (notMarking: string) => `candidates as (
    select o.id, o.seq, o.aggregate_type, o.aggregate_id, o.status as previous_status
      from outbox o
     where ((o.status = 'pending' and o.next_attempt_at <= now())
         or (o.status = 'in_flight' and o.lease_expires_at < now()))${notMarking}
       and (select (head.status = 'pending' and head.next_attempt_at <= now())
                or (head.status = 'in_flight' and (head.lease_expires_at < now()
                                                  or (head.id = any($4::uuid[]) and head.lease_owner = $1)))
              from outbox head
             where head.aggregate_type = o.aggregate_type
               and head.aggregate_id = o.aggregate_id
               and head.status <> 'published'
             order by head.seq
             limit 1)
     order by o.seq
     limit $3
       for update of o skip locked),
  run_ends as materialized (
    select a.aggregate_type, a.aggregate_id,
           (select stop.seq
              from outbox stop
             where stop.aggregate_type = a.aggregate_type
               and stop.aggregate_id = a.aggregate_id
               and stop.status <> 'published'
               and not (stop.id = any($4::uuid[]) and stop.lease_owner = $1)
               and stop.id not in (select c.id from candidates c)
             order by stop.seq
             limit 1) as stop_seq
      from (select distinct aggregate_type, aggregate_id from candidates) a),
  claimable as (
    select c.id, c.previous_status
      from candidates c
      join run_ends r on r.aggregate_type = c.aggregate_type and r.aggregate_id = c.aggregate_id
     where r.stop_seq is null or c.seq < r.stop_seq)`;

const claimUpdate = `  update outbox o
     set status = 'in_flight',
         lease_owner = $1,
         lease_expires_at = now() + make_interval(secs => $2::int / 1000.0),
         attempts = o.attempts + 1
    from claimable
   where o.id = claimable.id
  returning o.id, o.seq, o.source, o.aggregate_type, o.aggregate_id, o.event_type, o.schema_version,
            o.payload, o.headers, o.attempts, o.created_at,
            claimable.previous_status = 'in_flight' as lease_expired`;

export const claimSql = `
  with ${claimCtes('')}
${claimUpdate}`;

export async function claimBatch(
  db: Db,
  owner: string,
  leaseMs: number,
  limit: number,
  /** The ids of the batch this relay is delivering: the claim may extend their aggregates' runs. */
  inHand: string[] = [],
): Promise<ClaimedRow[]> {
  const { rows } = await db.query<ClaimedRow>({
    name: claimStatementNames.claim,
    text: claimSql,
    values: [owner, leaseMs, limit, inHand],
  });
  return rows.sort(bySeq);
}

/**
 * The mark itself: the rows of `ids` this relay still leases (`owner`) become published, their
 * lease and last error cleared. Shared by the mark alone and the mark sent with the next claim.
 */
const markRows = (ids: string, owner: string) => `    update outbox o
       set status = 'published',
           published_at = now(),
           lease_owner = null,
           lease_expires_at = null,
           last_error = null
     where o.id = any(${ids}::uuid[])
       and o.lease_owner = ${owner}`;

/**
 * After the broker acknowledged the batch; one statement for the whole batch. Each marked row
 * also says whether its aggregate has a later unpublished event: that event has just become
 * its aggregate's head, claimable now, and no NOTIFY will announce it (it was committed long
 * ago), so the relay claims again at once instead of leaving it to the poll. Asked once per
 * aggregate, of its last marked row (a batch holds runs of one aggregate: asking every row walks
 * each run again per row); neither the batch's rows nor those this relay already has in flight
 * (a pipelined batch) count, since the relay has them in hand.
 */
export const markPublishedSql = `
  with marked as (
${markRows('$1', '$2')}
    returning o.id, o.aggregate_type, o.aggregate_id, o.seq),
  last_of_aggregate as (
    select distinct on (aggregate_type, aggregate_id) id, aggregate_type, aggregate_id, seq
      from marked
     order by aggregate_type, aggregate_id, seq desc),
  unblocking as (
    select l.id
      from last_of_aggregate l
     where exists (
             select 1
               from outbox later
              where later.aggregate_type = l.aggregate_type
                and later.aggregate_id = l.aggregate_id
                and later.seq > l.seq
                and later.status <> 'published'
                and later.id <> all($1::uuid[])
                and not (later.status = 'in_flight' and later.lease_owner = $2)))
  select m.id, m.id in (select id from unblocking) as unblocks_later
    from marked m`;

export type Marked = {
  /** The ids really marked: a row whose lease another relay took over is not among them. */
  ids: Set<string>;
  /** How many of them had a later unpublished event of their aggregate, claimable from now on. */
  unblocked: number;
};

export async function markPublished(db: Db, ids: string[], owner: string): Promise<Marked> {
  const { rows } = await db.query<{ id: string; unblocks_later: boolean }>({
    name: claimStatementNames.markPublished,
    text: markPublishedSql,
    values: [ids, owner],
  });
  return {
    ids: new Set(rows.map((row) => row.id)),
    unblocked: rows.filter((row) => row.unblocks_later).length,
  };
}

/**
 * markAndClaim — the mark of an acknowledged batch ($5: its ids, fenced by $1 like markPublished)
 * and the next claim, in one statement: at low rates a batch holds an event or two, and the relay
 * saves the mark's round trip by sending it with the claim its next wake-up makes anyway
 * (apps/relay/src/engine/relay.ts, #idle). The claim reads the statement's snapshot, where the
 * marked rows are still in flight under this relay's lease: the caller passes them in hand too
 * ($4), so their aggregates' next events extend their runs as they would after a separate mark,
 * and a row another relay took over (not marked) extends nothing. The marked rows are kept out of
 * the candidates, so no row is updated twice. One row at least: `marked_ids`, the ids really
 * marked, then the claimed row's columns (null when the claim found nothing).
 */
export const markAndClaimSql = `
  with marked as (
${markRows('$5', '$1')}
    returning o.id),
  ${claimCtes('\n       and o.id <> all($5::uuid[])')},
  claimed as (${claimUpdate})
  select m.marked_ids, c.*
    from (select coalesce(array_agg(id::text), '{}') as marked_ids from marked) m
    left join claimed c on true`;

/**
 * Mark `marked` published (fenced by `owner`, as markPublished) and claim the next batch, in one
 * statement. The marked rows count as in hand for the claim. Returns the ids really marked and the
 * rows claimed, in `seq` order.
 */
export async function markAndClaim(
  db: Db,
  owner: string,
  leaseMs: number,
  limit: number,
  marked: string[],
  inHand: string[] = [],
): Promise<{ marked: Set<string>; rows: ClaimedRow[] }> {
  const { rows } = await db.query<ClaimedRow & { marked_ids: string[] }>({
    name: claimStatementNames.markAndClaim,
    text: markAndClaimSql,
    values: [owner, leaseMs, limit, [...inHand, ...marked], marked],
  });
  const claimed = rows
    .filter((row) => row.id !== null)
    .map(({ marked_ids: _, ...row }) => row as ClaimedRow)
    .sort(bySeq);
  return { marked: new Set(rows[0]?.marked_ids ?? []), rows: claimed };
}
