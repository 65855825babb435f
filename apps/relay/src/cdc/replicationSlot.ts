import type pg from 'pg';

/**
 * The connector's replication slot as PostgreSQL sees it: what CDC costs the database
 * (docs/runbooks.md#outboxreplicationslotretainingwal). A slot keeps every WAL segment from its
 * `restart_lsn` on until its reader confirms it, whether or not Kafka Connect runs.
 */
export type ReplicationSlot = {
  name: string;
  /** A reader (the connector's task) is streaming from it. */
  active: boolean;
  /**
   * This role sees who that reader is (its pid and start time in pg_stat_activity), which marking
   * rows published needs (packages/outbox/src/cdcStore.ts). PostgreSQL hides another role's session
   * from roles without pg_read_all_stats: then the relay marks nothing, however healthy the slot.
   */
  readerVisible: boolean;
  /** WAL the server keeps for this slot: from its restart_lsn to the current position. */
  retainedWalBytes: number;
  /** WAL written since the position the reader last confirmed (confirmed_flush_lsn). */
  unconfirmedWalBytes: number;
  confirmedFlushLsn: string | null;
  /** PostgreSQL's wal_status: reserved, extended, unreserved or lost (max_slot_wal_keep_size). */
  walStatus: string | null;
};

const slotSql = `
  select active,
         exists (select 1 from pg_stat_activity a where a.pid = active_pid and a.backend_start is not null)
           as reader_visible,
         wal_status,
         confirmed_flush_lsn::text as confirmed_flush_lsn,
         coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0)::float8 as retained,
         coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn), 0)::float8 as unconfirmed
    from pg_replication_slots
   where slot_name = $1`;

type Row = {
  active: boolean;
  reader_visible: boolean;
  wal_status: string | null;
  confirmed_flush_lsn: string | null;
  retained: number;
  unconfirmed: number;
};

/** The slot, or undefined while it does not exist (the connector creates it when it first starts). */
export async function readReplicationSlot(db: pg.Pool, name: string): Promise<ReplicationSlot | undefined> {
  const { rows } = await db.query<Row>(slotSql, [name]);
  const row = rows[0];
  if (!row) return undefined;
  return {
    name,
    active: row.active,
    readerVisible: row.reader_visible,
    retainedWalBytes: row.retained,
    unconfirmedWalBytes: row.unconfirmed,
    confirmedFlushLsn: row.confirmed_flush_lsn,
    walStatus: row.wal_status,
  };
}
