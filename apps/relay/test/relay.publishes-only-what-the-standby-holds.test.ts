// With an asynchronous standby, a row the relay publishes must already be on the standby: if the
// primary dies first, the promoted standby never had the row, and its event would announce an
// order that does not exist (docs/production.md#database-failover).

import { type PostgresPair, startPostgresPair } from '@outbox/devstack/postgres-pair';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { sharedMigrations } from '@outbox/inbox';
import { migrateDatabase } from '@outbox/runtime/migrate';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import { StandbyWait } from '@outbox/runtime/standby-wait';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type InProcessRelay, startInProcessRelay } from './inProcessRelay.ts';

useLeakGuard();

let pair: PostgresPair | undefined;
let setup: InProcessRelay | undefined;
let waitPool: pg.Pool | undefined;

afterAll(async () => {
  await setup?.dispose();
  await waitPool?.end();
  await pair?.remove();
});

describe('a relay waiting for an asynchronous standby', () => {
  it('publishes a row once the standby holds it, and gives a batch back while the standby receives nothing', {
    timeout: 180_000,
  }, async () => {
    pair = await startPostgresPair({ label: 'relay-standby' });
    await queryOnce(pair.url, 'create database outbox_standby');
    const url = new URL(pair.url);
    url.pathname = '/outbox_standby';
    await migrateDatabase(url.toString(), [sharedMigrations]);
    waitPool = new pg.Pool({ connectionString: url.toString(), max: 2 });
    const standbyWait = new StandbyWait({
      pool: waitPool,
      standby: 'standby',
      timeoutMs: 1_000,
      registry: createMetricsRegistry('relay-standby-test'),
    });
    const db = { name: 'outbox_standby', url: url.toString(), drop: async () => {} };
    setup = await startInProcessRelay('relay_standby', sharedKafkaBrokers(), { db, standbyWait });
    let publishes = 0;
    setup.around.before = async () => {
      publishes += 1;
    };

    await insertEvents(db.url, { count: 2, aggregates: 2 });
    expect((await setup.relay.drainOnce()).claimed).toBe(2);
    expect(publishes).toBe(1);

    await pair.pauseReceipt();
    await insertEvents(db.url, { count: 2, aggregates: 2, aggregateIdPrefix: 'later-' });
    const held = await setup.relay.drainOnce();
    expect(held.claimed).toBe(2);
    expect(held.retryInMs).toBeGreaterThan(0);
    expect(publishes).toBe(1); // the broker never saw the batch
    expect(setup.relay.health).toMatchObject({ status: 'degraded' });
    expect(setup.relay.health.lastError).toMatch(/^standby: no standby named standby is streaming/);
    const pending = (await outboxRows(db.url)).filter((row) => row.status !== 'published');
    expect(pending.map((row) => row.status)).toEqual(['pending', 'pending']);

    await pair.resumeReceipt();
    const deadline = Date.now() + 60_000;
    while ((await outboxRows(db.url)).some((row) => row.status !== 'published')) {
      if (Date.now() > deadline) throw new Error('the held rows were never published');
      await setup.relay.drainOnce();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(publishes).toBe(2);
    expect(setup.relay.health.status).toBe('ok');
  });
});
