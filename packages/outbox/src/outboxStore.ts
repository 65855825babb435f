import type pg from 'pg';
import {
  type ConfirmationMark,
  countUndrained,
  markConfirmed,
  readSlotReader,
  type SlotReader,
  takeConfirmationMark,
} from './cdcStore.ts';
import {
  claimBatch,
  claimSql,
  claimStatementNames,
  type Marked,
  markAndClaim,
  markAndClaimSql,
  markPublished,
  markPublishedSql,
} from './claimSql.ts';
import {
  markFailed,
  markFailedSql,
  RENEW_LEASES_STATEMENT,
  renewLeases,
  renewLeasesSql,
  scheduleRetry,
  scheduleRetrySql,
} from './leaseSql.ts';
import type { ClaimedRow } from './outboxRow.ts';
import {
  deletePublished,
  deletePublishedSql,
  type OutboxStats,
  outboxStats,
  type RedriveSelector,
  redrive,
  redriveSql,
  statsSql,
} from './upkeepSql.ts';

type Db = pg.Pool | pg.ClientBase;

/**
 * The outbox store: every operation on the rows of an `outbox` table, named, as Spring Modulith's
 * EventPublicationRegistry names the operations on its event publications. Each statement sits
 * beside the function that runs it, one file per part of the life of a row:
 *
 * - claimSql.ts: claim and mark (pending → in_flight → published), the order per aggregate;
 * - leaseSql.ts: the lease's other ends (renew, retry, dead-letter);
 * - upkeepSql.ts: outside the relay's batches (redrive, retention, stats);
 * - cdcStore.ts: debezium mode, where the replication slot's confirmation marks rows published.
 *
 * Each function takes the pool or client to run on first; createOutboxStore binds them all to one.
 * Rows enter the table through writeEvent (writeEvent.ts), not through the store: that INSERT runs
 * in the caller's business transaction, the one thing the pattern needs.
 *
 * A row's states are the values of its `status` column:
 *
 * ```mermaid
 * stateDiagram-v2
 *   [*] --> pending: writeEvent, in the business transaction
 *   pending --> in_flight: claimBatch or markAndClaim, once due and its aggregate's turn
 *   in_flight --> in_flight: renewLeases (same owner), or a claim after the lease expired (a new owner)
 *   in_flight --> published: markPublished or markAndClaim, after the broker acknowledged it
 *   in_flight --> pending: scheduleRetry, due again after a backoff
 *   in_flight --> failed: markFailed, a dead letter
 *   failed --> pending: redrive, by an operator
 *   pending --> published: markConfirmed, debezium mode, once the slot confirmed it
 *   published --> [*]: deletePublished, after the retention
 * ```
 *
 * Every transition out of `in_flight` is fenced by `lease_owner = $owner`: a relay whose lease
 * expired (and whose rows another relay took over) cannot overwrite the newer owner's state. Each
 * operation returns what it really changed, so callers count only that.
 */
export interface OutboxStore {
  /** Up to `limit` due rows leased to `owner` for `leaseMs`, in `seq` order (claimSql.ts says which). */
  claimBatch(owner: string, leaseMs: number, limit: number, inHand?: string[]): Promise<ClaimedRow[]>;
  /** After the broker acknowledged them: the rows of `ids` that `owner` still leases, published. */
  markPublished(ids: string[], owner: string): Promise<Marked>;
  /** markPublished of `marked` and the next claimBatch, in one statement. */
  markAndClaim(
    owner: string,
    leaseMs: number,
    limit: number,
    marked: string[],
    inHand?: string[],
  ): Promise<{ marked: Set<string>; rows: ClaimedRow[] }>;
  /** Push the lease of rows a slow publish still holds out by `leaseMs`; resolves how many. */
  renewLeases(ids: string[], owner: string, leaseMs: number): Promise<number>;
  /** Back to pending, due after `delayMs`; `countAttempt` false refunds the claim's attempt. */
  scheduleRetry(
    ids: string[],
    owner: string,
    retry: { error: string; delayMs: number; countAttempt: boolean },
  ): Promise<number>;
  /** Dead-letter one row with its error; false if `owner` no longer leases it. */
  markFailed(id: string, owner: string, error: string): Promise<boolean>;
  /** Dead letters back to pending, due now, attempts reset; resolves their ids. */
  redrive(selector: RedriveSelector): Promise<string[]>;
  /** Retention: up to `batchSize` rows published more than `retentionMs` ago, deleted. */
  deletePublished(retentionMs: number, batchSize: number): Promise<number>;
  /** Unpublished rows by status, and the age of the oldest not yet published. */
  outboxStats(): Promise<OutboxStats>;
  /** Debezium mode: who reads replication slot `slot` now, and the highest seq written. */
  readSlotReader(slot: string, since: string | undefined): Promise<SlotReader>;
  /** Debezium mode: pending rows to confirm once the slot's reader has confirmed the WAL position read with them. */
  takeConfirmationMark(
    slot: string,
    batchSize: number,
    range: { after: string; upTo?: string },
  ): Promise<ConfirmationMark>;
  /** Debezium mode: the mark's rows published if the slot confirmed it; undefined if not yet. */
  markConfirmed(mark: ConfirmationMark, slot: string): Promise<number | undefined>;
  /** Debezium mode: rows up to `maxSeq` still pending or in flight, the polling path's to publish. */
  countUndrained(maxSeq: string): Promise<number>;
}

/** The outbox store of the `outbox` table that `db` reaches. */
export function createOutboxStore(db: Db): OutboxStore {
  return {
    claimBatch: (owner, leaseMs, limit, inHand) => claimBatch(db, owner, leaseMs, limit, inHand),
    markPublished: (ids, owner) => markPublished(db, ids, owner),
    markAndClaim: (owner, leaseMs, limit, marked, inHand) =>
      markAndClaim(db, owner, leaseMs, limit, marked, inHand),
    renewLeases: (ids, owner, leaseMs) => renewLeases(db, ids, owner, leaseMs),
    scheduleRetry: (ids, owner, retry) => scheduleRetry(db, ids, owner, retry),
    markFailed: (id, owner, error) => markFailed(db, id, owner, error),
    redrive: (selector) => redrive(db, selector),
    deletePublished: (retentionMs, batchSize) => deletePublished(db, retentionMs, batchSize),
    outboxStats: () => outboxStats(db),
    readSlotReader: (slot, since) => readSlotReader(db, slot, since),
    takeConfirmationMark: (slot, batchSize, range) => takeConfirmationMark(db, slot, batchSize, range),
    markConfirmed: (mark, slot) => markConfirmed(db, mark, slot),
    countUndrained: (maxSeq) => countUndrained(db, maxSeq),
  };
}

/**
 * The polling relay's statements, for benchmarks and EXPLAIN probes that run exactly what the
 * relay runs (debezium mode's are cdcSql, cdcStore.ts).
 */
export const outboxSql = {
  claim: claimSql,
  markPublished: markPublishedSql,
  markAndClaim: markAndClaimSql,
  renewLeases: renewLeasesSql,
  scheduleRetry: scheduleRetrySql,
  markFailed: markFailedSql,
  redrive: redriveSql,
  deletePublished: deletePublishedSql,
  stats: statsSql,
} as const;

/**
 * The relay's hot statements run as named prepared statements: node-postgres prepares each once
 * per connection, and PostgreSQL then skips parsing and analysis on every later call (and, once
 * its plan cache judges a generic plan as good as the custom ones, planning too). The plans stay
 * on the partial indexes either way: tests/outbox/claimBatch.uses-the-pending-index.test.ts
 * explains the generic plan too.
 */
export const preparedStatementNames = {
  ...claimStatementNames,
  renewLeases: RENEW_LEASES_STATEMENT,
} as const;
