import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { MetricsRegistry } from './opsServer.ts';

/** The standby to wait for: `any` streaming standby, or the one of this application_name. */
export type StandbyTarget = 'any' | (string & {});

export type StandbyWaitOptions = {
  pool: pg.Pool;
  standby: StandbyTarget;
  /** The longest wait; past it untilStandbyHolds() throws and the caller tries again later. */
  timeoutMs: number;
  registry: MetricsRegistry;
};

/** The standby had not flushed the primary's WAL up to the asked position within the bound. */
export class StandbyBehindError extends Error {
  readonly code: 'STANDBY_BEHIND' | 'FAILED_OVER' = 'STANDBY_BEHIND';
}

/**
 * The database is a promoted standby since the last wait (its WAL timeline changed): what was
 * done on the old primary since then may be lost, so it must not be announced, and a consumer
 * must read again from its committed offsets.
 */
export class DatabaseFailedOverError extends StandbyBehindError {
  override readonly code = 'FAILED_OVER';
}

/**
 * Tell the world only what a failover cannot take back. With asynchronous replication a commit
 * exists on the primary alone until the standby has flushed it; if the primary dies first, the
 * promoted standby never had it. An event published from such a row announces an order that no
 * longer exists (a ghost), and a consumer offset committed for such an effect makes Kafka forget
 * an event whose effect is gone. So before either, the process reads the primary's WAL insert
 * position (everything it committed so far lies before it) and waits until the standby's flush position,
 * as the primary reports it in pg_stat_replication, has passed it.
 *
 * The wait is bounded: past it the caller gives up for now (the relay gives its batch back, a
 * consumer keeps its offsets uncommitted) and says so; `database_standby_lag_bytes` shows how far
 * behind the standby is. Costs, and the choice against synchronous replication:
 * docs/production.md#database-failover.
 */
export class StandbyWait {
  readonly #options: StandbyWaitOptions;
  readonly #waited: Histogram;
  readonly #lag: Gauge;
  readonly #timeouts: Counter;
  /**
   * The primary's WAL timeline at the last wait, or at this object's creation before the first
   * one; a promotion starts a new one.
   */
  #timeline: string | undefined;
  readonly #baseline: Promise<void>;

  constructor(options: StandbyWaitOptions) {
    this.#options = options;
    // The process's first wait needs a timeline to compare with: the one it started on. Without
    // it, a failover between the process's start and its first wait would pass unseen.
    this.#baseline = readPosition(options.pool).then(
      ({ timeline }) => {
        this.#timeline ??= timeline;
      },
      () => {}, // the database not up yet: the first wait sets it
    );
    const registers = [options.registry];
    this.#waited = new Histogram({
      name: 'database_standby_wait_seconds',
      help: "How long a publish (relay) or an offset commit (consumer) waited for the standby to flush the primary's WAL.",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.#lag = new Gauge({
      name: 'database_standby_lag_bytes',
      help: 'WAL bytes the standby had not flushed when last looked (-1: no such standby connected).',
      registers,
    });
    this.#timeouts = new Counter({
      name: 'database_standby_wait_timeouts_total',
      help: 'Waits for the standby that reached their bound (DATABASE_STANDBY_WAIT_MS); the work was tried again later.',
      registers,
    });
  }

  /** Resolves once the standby holds every row committed before now; throws StandbyBehindError past the bound. */
  async untilStandbyHolds(): Promise<void> {
    const { pool, standby, timeoutMs } = this.#options;
    const started = Date.now();
    await this.#baseline;
    const { lsn, timeline } = await readPosition(pool);
    this.#checkTimeline(timeline);
    let pauseMs = 0.5;
    while (true) {
      const { lag, timeline: now } = await standbyLag(pool, standby, lsn);
      // A promotion while waiting: the new primary's standbys know nothing of `lsn`'s timeline.
      this.#checkTimeline(now);
      this.#lag.set(lag ?? -1);
      if (lag === 0) break;
      if (Date.now() - started >= timeoutMs) {
        this.#timeouts.inc();
        throw new StandbyBehindError(
          lag === undefined
            ? `no standby ${standby === 'any' ? '' : `named ${standby} `}is streaming from the primary: ` +
                'nothing is announced until one is (or turn DATABASE_WAIT_FOR_STANDBY off)'
            : `the standby is ${lag} bytes of WAL behind after ${timeoutMs} ms: nothing is announced until it catches up`,
        );
      }
      await sleep(pauseMs);
      pauseMs = Math.min(pauseMs * 2, 20);
    }
    this.#waited.observe((Date.now() - started) / 1000);
  }

  #checkTimeline(timeline: string): void {
    const seen = this.#timeline;
    this.#timeline = timeline;
    if (seen !== undefined && seen !== timeline) {
      throw new DatabaseFailedOverError(
        `the database failed over (WAL timeline ${seen} → ${timeline}): ` +
          'what was done before it on the old primary is not announced',
      );
    }
  }
}

/**
 * The primary's WAL insert position (every commit so far lies before it, an asynchronous commit's
 * not yet written out included, which pg_current_wal_lsn() may not have passed) and its timeline.
 * At the start of a page the insert position is past the page's header (24 bytes, 40 on a
 * segment's first page), which no standby flushes before the next record: the record before ends
 * at the page's start, the position waited for.
 */
const positionSql = `
  with insert as (select pg_current_wal_insert_lsn() as lsn),
       offsets as (select lsn, (lsn - '0/0'::pg_lsn) as bytes from insert)
  select (case when bytes % pg_size_bytes(current_setting('wal_segment_size')) = 40 then lsn - 40
               when bytes % current_setting('wal_block_size')::numeric = 24 then lsn - 24
               else lsn end)::text as lsn,
         left(pg_walfile_name(lsn), 8) as timeline
    from offsets`;

async function readPosition(pool: pg.Pool): Promise<{ lsn: string; timeline: string }> {
  const { rows } = await pool.query<{ lsn: string; timeline: string }>(positionSql);
  const row = rows[0];
  if (!row) throw new Error('no WAL position read');
  return row;
}

/**
 * Bytes of WAL up to `lsn` that the standby has not flushed yet (0: it holds them all), or
 * undefined when no such standby is streaming, and the primary's timeline now. With `any`, the
 * standby furthest ahead.
 */
async function standbyLag(
  pool: pg.Pool,
  standby: StandbyTarget,
  lsn: string,
): Promise<{ lag: number | undefined; timeline: string }> {
  // min() of no rows is null (no such standby streaming); greatest() would turn it into 0.
  const { rows } = await pool.query<{ lag: string | null; timeline: string }>(
    `select (select min(pg_wal_lsn_diff($1::pg_lsn, flush_lsn))
               from pg_stat_replication
              where state = 'streaming' and flush_lsn is not null
                and ($2::text = 'any' or application_name = $2::text)
                -- Only a server replays WAL: pg_receivewal and a base backup's WAL stream flush
                -- it (an archive, a copy in the making) but report no replay position.
                and replay_lsn is not null
                -- A logical reader (a CDC connector, a subscriber) holds no copy of the database.
                and not exists (select 1 from pg_replication_slots slot
                                 where slot.active_pid = pg_stat_replication.pid
                                   and slot.slot_type = 'logical'))::text as lag,
            left(pg_walfile_name(pg_current_wal_insert_lsn()), 8) as timeline`,
    [lsn, standby],
  );
  const lag = rows[0]?.lag;
  return {
    lag: lag === null || lag === undefined ? undefined : Math.max(0, Number(lag)),
    timeline: rows[0]?.timeline ?? '',
  };
}
