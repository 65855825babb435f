import type pg from 'pg';
import { claimSql, markAndClaimSql, markPublishedSql } from './claimSql.ts';
import type { ClaimedRow } from './outboxRow.ts';

/**
 * The outbox store: every statement the relay and its tools run against the `outbox` table, and
 * the state machine they implement, in one place. (The write side, `writeEvent`, runs inside the
 * business transaction and lives in writeEvent.ts.)
 *
 *   pending ──claim──▶ in_flight ──markPublished──▶ published ──deletePublished──▶ (gone)
 *      ▲                  │  │
 *      └──scheduleRetry───┘  └──markFailed──▶ failed ──redrive──▶ pending
 *
 * In debezium mode (docs/design.md#polling-or-cdc) a connector reads the inserts from the WAL, and
 * rows go from `pending` to `published` once its replication slot has confirmed them (cdcStore.ts).
 *
 * Every transition out of `in_flight` is fenced by `lease_owner = $owner`: a relay whose lease
 * expired (and whose rows another relay took over) cannot overwrite the newer owner's state. Each
 * function returns what it really changed, so callers count only that.
 */

type Db = pg.Pool | pg.ClientBase;

/** The statements, exported so that benchmarks and EXPLAIN probes run exactly what the relay runs. */
export const outboxSql = {
  /** claimSql.ts says how a claim keeps each aggregate's order. */
  claim: claimSql,

  /** claimSql.ts: after the broker acknowledged a batch, and what it unblocked. */
  markPublished: markPublishedSql,

  /** claimSql.ts: an acknowledged batch's mark sent with the next claim, one statement for both. */
  markAndClaim: markAndClaimSql,

  /** Keep a slow publish's rows ours: push the lease out again while the broker has them. */
  renewLeases: `
  update outbox
     set lease_expires_at = now() + make_interval(secs => $3::int / 1000.0)
   where id = any($1::uuid[])
     and lease_owner = $2
     and status = 'in_flight'`,

  /**
   * Back to `pending`, due after $4 ms, the error kept for operators. $5 false refunds the attempt
   * the claim counted: used when the broker was unreachable, which says nothing about the events,
   * so a long outage never dead-letters healthy events.
   */
  scheduleRetry: `
  update outbox
     set status = 'pending',
         lease_owner = null,
         lease_expires_at = null,
         last_error = $3,
         next_attempt_at = now() + make_interval(secs => $4::int / 1000.0),
         attempts = attempts - (case when $5::boolean then 0 else 1 end)
   where id = any($1::uuid[])
     and lease_owner = $2`,

  /**
   * Dead-letter: not retried until an operator redrives it. The row stays with its last error, so
   * nothing is lost; later events of the same aggregate wait behind it rather than overtaking it.
   */
  markFailed: `
  update outbox
     set status = 'failed',
         lease_owner = null,
         lease_expires_at = null,
         last_error = $3
   where id = $1::uuid
     and lease_owner = $2`,

  /** Dead-lettered events back in line after a fix: `pending`, due now, attempts reset. */
  redrive: `
  update outbox
     set status = 'pending',
         attempts = 0,
         next_attempt_at = now(),
         last_error = null
   where status = 'failed'
     and ($1::uuid is null or id = $1::uuid)
     and ($2::text is null or event_type = $2)
  returning id`,

  /**
   * Retention: up to $2 events published longer than $1 ms ago. Small batches keep each delete
   * short (no long lock, no WAL spike); rows that are not published are never touched.
   */
  deletePublished: `
  delete from outbox
   where id in (
         select id
           from outbox
          where status = 'published'
            and published_at < now() - make_interval(secs => $1::bigint / 1000.0)
          limit $2
            for update skip locked)`,

  /** Unpublished rows only: counting published ones would scan the table. */
  stats: `
  select status, count(*)::int as count,
         coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as oldest_seconds
    from outbox
   where status <> 'published'
   group by status`,
} as const;

/**
 * The relay's hot statements run as named prepared statements: node-postgres prepares each once
 * per connection, and PostgreSQL then skips parsing and analysis on every later call (and, once
 * its plan cache judges a generic plan as good as the custom ones, planning too). The plans stay
 * on the partial indexes either way: test/claim-query-plan.test.ts explains the generic plan too.
 */
export const preparedStatementNames = {
  claim: 'outbox_claim',
  markPublished: 'outbox_mark_published',
  markAndClaim: 'outbox_mark_and_claim',
  renewLeases: 'outbox_renew_leases',
} as const;

export async function claimBatch(
  db: Db,
  owner: string,
  leaseMs: number,
  limit: number,
  /** The ids of the batch this relay is delivering: the claim may extend their aggregates' runs. */
  inHand: string[] = [],
): Promise<ClaimedRow[]> {
  const { rows } = await db.query<ClaimedRow>({
    name: preparedStatementNames.claim,
    text: outboxSql.claim,
    values: [owner, leaseMs, limit, inHand],
  });
  // UPDATE ... RETURNING does not keep the subquery's order.
  return rows.sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq)));
}

/**
 * Mark `marked` published (fenced by `owner`, as markPublished) and claim the next batch, in one
 * statement (claimSql.ts, markAndClaim). The marked rows count as in hand for the claim. Returns
 * the ids really marked and the rows claimed, in `seq` order.
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
    name: preparedStatementNames.markAndClaim,
    text: outboxSql.markAndClaim,
    values: [owner, leaseMs, limit, [...inHand, ...marked], marked],
  });
  const claimed = rows
    .filter((row) => row.id !== null)
    .map(({ marked_ids: _, ...row }) => row as ClaimedRow)
    .sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq)));
  return { marked: new Set(rows[0]?.marked_ids ?? []), rows: claimed };
}

export type Marked = {
  /** The ids really marked: a row whose lease another relay took over is not among them. */
  ids: Set<string>;
  /** How many of them had a later unpublished event of their aggregate, claimable from now on. */
  unblocked: number;
};

export async function markPublished(db: Db, ids: string[], owner: string): Promise<Marked> {
  const { rows } = await db.query<{ id: string; unblocks_later: boolean }>({
    name: preparedStatementNames.markPublished,
    text: outboxSql.markPublished,
    values: [ids, owner],
  });
  return {
    ids: new Set(rows.map((row) => row.id)),
    unblocked: rows.filter((row) => row.unblocks_later).length,
  };
}

export async function renewLeases(db: Db, ids: string[], owner: string, leaseMs: number): Promise<number> {
  const { rowCount } = await db.query({
    name: preparedStatementNames.renewLeases,
    text: outboxSql.renewLeases,
    values: [ids, owner, Math.round(leaseMs)],
  });
  return rowCount ?? 0;
}

export async function scheduleRetry(
  db: Db,
  ids: string[],
  owner: string,
  retry: { error: string; delayMs: number; countAttempt: boolean },
): Promise<number> {
  const { rowCount } = await db.query(outboxSql.scheduleRetry, [
    ids,
    owner,
    retry.error.slice(0, 2000),
    Math.round(retry.delayMs),
    retry.countAttempt,
  ]);
  return rowCount ?? 0;
}

export async function markFailed(db: Db, id: string, owner: string, error: string): Promise<boolean> {
  const { rowCount } = await db.query(outboxSql.markFailed, [id, owner, error.slice(0, 2000)]);
  return rowCount === 1;
}

export type RedriveSelector = { id: string } | { eventType: string } | { all: true };

/** Returns the ids re-queued; only `failed` rows are touched. */
export async function redrive(db: Db, selector: RedriveSelector): Promise<string[]> {
  const id = 'id' in selector ? selector.id : null;
  const eventType = 'eventType' in selector ? selector.eventType : null;
  const { rows } = await db.query<{ id: string }>(outboxSql.redrive, [id, eventType]);
  return rows.map((row) => row.id);
}

/**
 * The caller repeats until fewer than `batchSize` rows come back. The retention is rounded to a
 * whole millisecond: hours times 3,600,000 in floating point (2.2 hours) fails the bigint cast.
 */
export async function deletePublished(db: Db, retentionMs: number, batchSize: number): Promise<number> {
  const { rowCount } = await db.query(outboxSql.deletePublished, [Math.round(retentionMs), batchSize]);
  return rowCount ?? 0;
}

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
  }>(outboxSql.stats);
  const byStatus = { pending: 0, in_flight: 0, failed: 0 };
  let oldest = 0;
  for (const row of rows) {
    byStatus[row.status] = row.count;
    if (row.status !== 'failed') oldest = Math.max(oldest, row.oldest_seconds);
  }
  return { byStatus, oldestUnpublishedSeconds: oldest };
}
