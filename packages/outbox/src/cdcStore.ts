import type pg from 'pg';

/**
 * The outbox store's statements of debezium mode (docs/design.md#polling-or-cdc; OutboxStore,
 * outboxStore.ts), each beside the function that runs it. A connector publishes the rows from the
 * WAL; the relay confirms a row `published` once the connector's replication slot has confirmed a
 * position after it, so that `status` means the same in both modes: `published` is known to be on
 * Kafka, `pending` may not be.
 *
 * A confirmation counts only if it comes from the reader that held the slot when the mark was
 * taken. A slot can be dropped only while nobody reads it, so a reader that held it at both
 * moments held the same slot all along; a slot dropped and re-created in between has another reader,
 * and its confirmed position says nothing of rows committed before it existed.
 */

type Db = pg.Pool | pg.ClientBase;

/**
 * The walsender streaming from a slot, as `<pid>@<backend start>`: a pid alone is reused by later
 * backends. Null while the slot does not exist or nobody reads it, and while it is still being
 * created: CREATE_REPLICATION_SLOT shows its walsender at once, but the slot decodes only
 * transactions that commit after its consistent point, which it reaches once every transaction
 * running at its start has ended; confirmed_flush_lsn is null until then. pg_stat_activity shows
 * another role's backend_start only to roles with pg_read_all_stats (docs/production.md).
 */
const slotReaderSubquery = `
  (select a.pid::text || '@' || extract(epoch from a.backend_start)::text
     from pg_replication_slots s
     join pg_stat_activity a on a.pid = s.active_pid
    where s.slot_name = $1
      and s.confirmed_flush_lsn is not null)`;

/** Read before slotStateSql, in a statement of its own (see readSlotReader). */
const walInsertPositionSql = 'select pg_current_wal_insert_lsn()::text as lsn';

/**
 * The slot's reader, whether the slot exists, and whether its restart_lsn is below $2, a WAL
 * insert position read at an earlier check while the slot existed.
 */
const slotStateSql = `
  select ${slotReaderSubquery} as reader,
         exists (select 1 from pg_replication_slots where slot_name = $1) as slot_exists,
         coalesce((select restart_lsn < $2::pg_lsn from pg_replication_slots where slot_name = $1), false)
           as restart_before`;

/** The highest seq, read in a statement after the one that saw the reader (see readSlotReader). */
const maxSeqSql = 'select coalesce(max(seq), 0)::text as max_seq from outbox';

export type SlotReader = {
  /**
   * `<pid>@<backend start>` of the walsender holding the slot; undefined while none does, or while
   * the slot is still being created.
   */
  reader: string | undefined;
  /** The highest seq written so far (0 for an empty outbox). */
  maxSeq: string;
  /** The slot exists (read or not). */
  exists: boolean;
  /**
   * The slot's restart_lsn is below `since`: it is the slot that existed when `since` was read. A
   * slot created later starts at or past the WAL insert position of its creation.
   */
  existedAtSince: boolean;
  /** The WAL insert position read just before the slot: the next check's `since`. */
  position: string;
};

/**
 * The slot and its reader, in three statements, each with a snapshot of its own. The insert
 * position first: read in the same statement as the slot, it could be read after a slot dropped and
 * created between the two reads. The highest seq last: a row it does not see commits after the
 * slot was seen past its consistent point, so the slot decodes it; read in the slot's statement,
 * from a snapshot taken before the slot was read, it could miss a row committed in between.
 */
export async function readSlotReader(db: Db, slot: string, since: string | undefined): Promise<SlotReader> {
  const position = (await db.query<{ lsn: string }>(walInsertPositionSql)).rows[0]?.lsn ?? '0/0';
  const { rows } = await db.query<{
    reader: string | null;
    slot_exists: boolean;
    restart_before: boolean;
  }>(slotStateSql, [slot, since ?? '0/0']);
  const row = rows[0];
  const maxSeq = (await db.query<{ max_seq: string }>(maxSeqSql)).rows[0]?.max_seq ?? '0';
  return {
    reader: row?.reader ?? undefined,
    maxSeq,
    exists: row?.slot_exists ?? false,
    existedAtSince: since !== undefined && (row?.restart_before ?? false),
    position,
  };
}

/**
 * Step one: up to $2 pending rows above seq $3 (and up to $4, if not null), the WAL insert
 * position read after them and the slot's reader. One statement, one snapshot taken before any of them is read: every row returned
 * was committed before the snapshot, so its commit record is in the WAL before `lsn`. Rows up to
 * $3 are the drain's (cdcDrain.ts): a row there may be pending without its INSERT in the slot's
 * stream. Walks outbox_claimable_idx in seq order.
 */
const confirmationMarkSql = `
  with marked as (
         select id, seq
           from outbox
          where status = 'pending'
            and seq > $3::bigint
            and ($4::bigint is null or seq <= $4::bigint)
          order by seq
          limit $2)
  select pg_current_wal_insert_lsn()::text as lsn,
         ${slotReaderSubquery} as reader,
         array(select id from marked order by seq) as ids,
         (select max(seq) from marked)::text as last_seq`;

/**
 * Pending rows to mark published once `reader` has confirmed `lsn` on the slot; `lastSeq` is the
 * highest seq among them (undefined when there are none).
 */
export type ConfirmationMark = {
  lsn: string;
  reader: string | undefined;
  ids: string[];
  lastSeq: string | undefined;
};

/**
 * Up to `batchSize` pending rows with a seq above `range.after` (the drain's up to it) and, if
 * given, up to `range.upTo`.
 */
export async function takeConfirmationMark(
  db: Db,
  slot: string,
  batchSize: number,
  range: { after: string; upTo?: string },
): Promise<ConfirmationMark> {
  const { rows } = await db.query<{
    lsn: string;
    reader: string | null;
    ids: string[];
    last_seq: string | null;
  }>(confirmationMarkSql, [slot, batchSize, range.after, range.upTo ?? null]);
  const row = rows[0];
  return {
    lsn: row?.lsn ?? '0/0',
    reader: row?.reader ?? undefined,
    ids: row?.ids ?? [],
    lastSeq: row?.last_seq ?? undefined,
  };
}

/**
 * Step two: those rows `published`, only if slot $3 is still read by reader $4 and has confirmed
 * `lsn` ($2). Rows no longer pending (the drain leased or published them) are left alone.
 */
const markConfirmedSql = `
  update outbox
     set status = 'published',
         published_at = now(),
         last_error = null
   where id = any($1::uuid[])
     and status = 'pending'
     and exists (
           select 1
             from pg_replication_slots s
             join pg_stat_activity a on a.pid = s.active_pid
            where s.slot_name = $3
              and s.confirmed_flush_lsn >= $2::pg_lsn
              and a.pid::text || '@' || extract(epoch from a.backend_start)::text = $4)`;

/**
 * Marks the mark's rows published if its reader still holds slot `slot` and has confirmed the
 * mark's position; resolves undefined when it has not (nothing marked), else with the rows marked.
 */
export async function markConfirmed(
  db: Db,
  mark: ConfirmationMark,
  slot: string,
): Promise<number | undefined> {
  const { rows } = await db.query<{ marked: number; confirmed: boolean | null }>(
    `with marked as (${markConfirmedSql} returning 1)
     select (select count(*)::int from marked) as marked,
            (select s.confirmed_flush_lsn >= $2::pg_lsn
               from pg_replication_slots s
               join pg_stat_activity a on a.pid = s.active_pid
              where s.slot_name = $3
                and a.pid::text || '@' || extract(epoch from a.backend_start)::text = $4) as confirmed`,
    [mark.ids, mark.lsn, slot, mark.reader ?? ''],
  );
  return rows[0]?.confirmed ? rows[0].marked : undefined;
}

/** Rows up to seq $1 that the polling path must still publish: the drain is over when none are left. */
const undrainedSql = `
  select count(*)::int as count
    from outbox
   where status in ('pending', 'in_flight')
     and seq <= $1::bigint`;

/** How many rows up to `maxSeq` are still pending or in flight. */
export async function countUndrained(db: Db, maxSeq: string): Promise<number> {
  const { rows } = await db.query<{ count: number }>(undrainedSql, [maxSeq]);
  return rows[0]?.count ?? 0;
}

/** The statements, for probes and benchmarks that run exactly what the relay runs. */
export const cdcSql = {
  walInsertPosition: walInsertPositionSql,
  slotReader: slotStateSql,
  maxSeq: maxSeqSql,
  confirmationMark: confirmationMarkSql,
  markConfirmed: markConfirmedSql,
  undrained: undrainedSql,
} as const;
