import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PostgresPair, startPostgresPair } from '@outbox/devstack/postgres-pair';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../src/opsServer.ts';
import { StandbyBehindError, StandbyWait } from '../src/standbyWait.ts';

useLeakGuard();

describe('waiting for the standby before announcing (async primary and standby)', () => {
  let pair: PostgresPair | undefined;
  let pool: pg.Pool | undefined;
  afterAll(async () => {
    await pool?.end();
    await pair?.remove();
  });

  it('passes once the standby flushed, holds back while it receives nothing, and refuses after a promotion', async () => {
    const started = await startPostgresPair({ label: 'standby-wait-test' });
    pair = started;
    const db = new pg.Pool({ connectionString: started.url, max: 2 });
    pool = db;
    db.on('error', () => {});
    const registry = createMetricsRegistry('standby-wait-test');
    const wait = new StandbyWait({ pool: db, standby: 'standby', timeoutMs: 1_500, registry });
    // Created with the process, first asked after the failover below: it compares with the
    // timeline it was created on.
    const firstWaitAfterFailover = new StandbyWait({
      pool: db,
      standby: 'standby',
      timeoutMs: 1_500,
      registry: createMetricsRegistry('standby-wait-first-test'),
    });
    await db.query('create table t (id int)');
    await db.query('insert into t values (1)');
    await wait.untilStandbyHolds();

    // A logical reader streams from the primary too (as a CDC connector does), confirming what it
    // reads within a second; it holds no copy of the database, so it must not count as a standby.
    const reader = spawn(
      `${process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin'}/pg_recvlogical`,
      ['-d', started.url, '--slot', 'reader', '--create-slot', '--start', '-P', 'test_decoding'].concat([
        '-s',
        '1',
        '-F',
        '1',
        '-f',
        '/dev/null',
      ]),
      { stdio: 'ignore' },
    );
    try {
      await expect
        .poll(
          async () =>
            (await db.query(`select 1 from pg_stat_replication where application_name = 'pg_recvlogical'`))
              .rowCount,
          { timeout: 30_000, interval: 200 },
        )
        .toBe(1);
      const anyStandby = new StandbyWait({
        pool: db,
        standby: 'any',
        timeoutMs: 3_000,
        registry: createMetricsRegistry('standby-wait-any-test'),
      });

      // Nothing streams: a commit now is on the primary alone, so nothing may be announced.
      await started.pauseReceipt();
      await db.query('insert into t values (2)');
      await expect(wait.untilStandbyHolds()).rejects.toMatchObject({ code: 'STANDBY_BEHIND' });
      expect(await registry.getSingleMetricAsString('database_standby_lag_bytes')).toMatch(/ -1$/m);
      await expect(anyStandby.untilStandbyHolds()).rejects.toMatchObject({ code: 'STANDBY_BEHIND' });

      // pg_receivewal streams and flushes the primary's WAL (an archive), but is no server that a
      // failover could promote: it must not count as `any` standby either.
      const archive = mkdtempSync(join(tmpdir(), 'standby-wait-receivewal-'));
      const receiver = spawn(
        `${process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin'}/pg_receivewal`,
        ['-d', started.url, '-D', archive, '--synchronous', '--no-loop', '-s', '1'],
        { stdio: 'ignore' },
      );
      try {
        await expect
          .poll(
            async () =>
              (
                await db.query(
                  `select 1 from pg_stat_replication where application_name = 'pg_receivewal' and state = 'streaming'
                      and flush_lsn >= pg_current_wal_insert_lsn()`,
                )
              ).rowCount,
            { timeout: 30_000, interval: 200 },
          )
          .toBe(1);
        await expect(anyStandby.untilStandbyHolds()).rejects.toMatchObject({ code: 'STANDBY_BEHIND' });
      } finally {
        receiver.kill('SIGKILL');
        rmSync(archive, { recursive: true, force: true });
      }
    } finally {
      reader.kill('SIGKILL');
    }
    // The reader gone and its slot dropped, the primary is as before it came.
    await expect
      .poll(
        async () =>
          (await db.query(`select 1 from pg_replication_slots where slot_name = 'reader' and active`))
            .rowCount,
        {
          timeout: 30_000,
          interval: 200,
        },
      )
      .toBe(0);
    await db.query(`select pg_drop_replication_slot('reader')`);

    // The standby is promoted: what the old primary did since the last wait may be gone.
    await started.killPrimary();
    await started.promote();
    await started.rebuildStandby();
    // The pool may first hand out a connection the failover cut: that attempt fails like any
    // lost connection, and the next one answers.
    let outcome: unknown;
    for (let attempt = 0; attempt < 5 && !(outcome instanceof StandbyBehindError); attempt++)
      outcome = await wait.untilStandbyHolds().then(
        () => 'passed',
        (err: unknown) => err,
      );
    expect(outcome).toMatchObject({ code: 'FAILED_OVER' });
    await expect(firstWaitAfterFailover.untilStandbyHolds()).rejects.toMatchObject({ code: 'FAILED_OVER' });
    // Once said, the new timeline is the one waited on.
    await wait.untilStandbyHolds();
    expect((await db.query('select id from t order by id')).rows).toEqual([{ id: 1 }]);
  });
});
