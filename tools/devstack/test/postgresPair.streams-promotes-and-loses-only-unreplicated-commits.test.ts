import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostgresPair, startPostgresPair } from '../src/postgresPair.ts';
import { useLeakGuard } from '../src/testing/leakGuard.ts';

useLeakGuard();

/** One statement through the pair's endpoint (a new connection each time, as after a failover). */
async function viaEndpoint<T>(pair: PostgresPair, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: pair.url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end().catch(() => {});
  }
}

async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.each(['async', 'sync'] as const)('a PostgreSQL primary and standby (%s)', (replication) => {
  let pair: PostgresPair | undefined;
  afterAll(async () => {
    await pair?.remove();
  });

  it('streams to the standby, promotes it after a kill -9, and keeps one endpoint for the primary', async () => {
    const started = await startPostgresPair({ label: `pair-test-${replication}`, replication });
    pair = started;
    const firstPrimary = pair.primary.port;
    await viaEndpoint(pair, 'create table t (id int primary key)');
    await viaEndpoint(pair, 'insert into t values (1)');
    const [settings] = await viaEndpoint<{ names: string }>(
      pair,
      "select current_setting('synchronous_standby_names') as names",
    );
    expect(settings?.names).toBe(replication === 'sync' ? 'standby' : '');
    const { primaryLsn } = await pair.positions();
    await until('the standby to flush the insert', async () => {
      const { standbyFlushLsn } = await started.positions();
      const [row] = await viaEndpoint<{ behind: boolean }>(
        started,
        `select '${standbyFlushLsn}'::pg_lsn < '${primaryLsn}'::pg_lsn as behind`,
      );
      return standbyFlushLsn !== null && row?.behind === false;
    });

    // A standby promoted beside a live primary would make two primaries: refused.
    await expect(pair.promote()).rejects.toThrow(/primary is alive/);

    // Async: what the standby never received dies with the primary. Sync: a commit that returned
    // is on the standby.
    if (replication === 'async') await pair.pauseReceipt();
    await viaEndpoint(pair, 'insert into t values (2)');
    await pair.killPrimary();
    await expect(viaEndpoint(pair, 'select 1')).rejects.toThrow();
    await pair.promote();

    expect(pair.primary.port).not.toBe(firstPrimary);
    const rows = await viaEndpoint<{ id: number }>(pair, 'select id from t order by id');
    expect(rows.map((row) => row.id)).toEqual(replication === 'async' ? [1] : [1, 2]);
    await viaEndpoint(pair, 'insert into t values (3)');
    const [recovery] = await viaEndpoint<{ recovering: boolean }>(
      pair,
      'select pg_is_in_recovery() as recovering',
    );
    expect(recovery?.recovering).toBe(false);

    // The dead primary's place is taken by a fresh standby of the new one.
    await pair.rebuildStandby();
    const [streaming] = await viaEndpoint<{ n: number }>(
      pair,
      `select count(*)::int as n from pg_stat_replication where state = 'streaming'`,
    );
    expect(streaming?.n).toBe(1);
  });
});
