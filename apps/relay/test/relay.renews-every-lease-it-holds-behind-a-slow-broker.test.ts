// Two relays on one outbox, the broker slow for both. Every row a relay holds must stay leased to
// it until the row has an outcome, or the other relay takes it over and publishes it a second
// time: while the rows go out one at a time after the broker refused their batch, and while a
// pipelined batch waits for the slow batch ahead of it.
import { type OwnBroker, startOwnBroker } from '@outbox/chaos/own-broker';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { counterTotal, type InProcessRelay, startInProcessRelay } from './inProcessRelay.ts';
import { firstOccurrencesByKey, topicPrefix } from './relayProcess.ts';

useLeakGuard();

const LEASE_MS = 1500;
let own: OwnBroker;
let db: TestDatabase;
let prefix: string;
let holder: InProcessRelay;
let competitor: InProcessRelay;

beforeAll(async () => {
  own = await startOwnBroker('relay-slow-lease', { latencyMs: 0 });
});

afterAll(async () => {
  await own?.dispose();
});

/** The relay that holds the rows, and one that polls every 50 ms for rows whose lease ran out. */
async function twoRelays(holderOptions: { batchSize: number; minBatchSize?: number }) {
  db = await createOutboxDatabase('relay_slow_lease');
  prefix = topicPrefix('relay-slow-lease');
  const shared = { db, topicPrefix: prefix, leaseMs: LEASE_MS, pollIntervalMs: 50 };
  holder = await startInProcessRelay('holder', own.broker.brokers, { ...shared, ...holderOptions });
  competitor = await startInProcessRelay('competitor', own.broker.brokers, shared);
}

afterEach(async () => {
  await competitor?.dispose();
  await holder?.dispose();
  await db?.drop();
  if (own.proxy) own.proxy.latencyMs = 0;
});

/** What the competitor took over and what the holder could not mark, and the topic's duplicates. */
async function duplicatesAndTakeovers() {
  const messages = await readTopic(own.broker.brokers, `${prefix}order.events`);
  return {
    takenOver: await counterTotal(competitor.metrics.leaseTakeovers),
    fencedOff: await counterTotal(holder.metrics.fencedOff),
    duplicates: firstOccurrencesByKey(messages).duplicateIds,
  };
}

describe('two relays, a broker 300 ms or more away', () => {
  it('keeps renewing while a refused batch goes out one event at a time', {
    timeout: 120_000,
  }, async () => {
    await twoRelays({ batchSize: 10 });
    // Healthy events, and one above the broker's maximum message size: the broker refuses the
    // batch, and the holder publishes its events one at a time, each a few slow round trips.
    await insertEvents(db.url, { count: 5, aggregates: 5 });
    await insertEvents(db.url, {
      count: 1,
      aggregates: 1,
      aggregateIdPrefix: 'poison-',
      payload: { orderId: 'poison', note: 'x'.repeat(2 * 1024 * 1024) },
    });
    await insertEvents(db.url, { count: 4, aggregates: 4, aggregateIdPrefix: 'later-' });
    if (own.proxy) own.proxy.latencyMs = 300;
    holder.around.before = async () => competitor.relay.start(); // once the holder has the rows
    const started = Date.now();
    await holder.relay.drainOnce();
    // The one-by-one retry outlasted the lease many times over: the gap was real.
    expect(Date.now() - started).toBeGreaterThan(2 * LEASE_MS);

    console.log('ROWS', Date.now() - started, JSON.stringify((await outboxRows(db.url)).map((r) => [r.status, r.lease_owner, r.attempts, r.last_error?.slice(0, 80)])), await counterTotal(holder.metrics.leaseRenewals), await counterTotal(competitor.metrics.leaseTakeovers));
    const statuses = (await outboxRows(db.url)).map((row) => row.status).sort();
    expect(statuses).toEqual(['failed', ...Array(9).fill('published')]);
    expect(await duplicatesAndTakeovers()).toEqual({ takenOver: 0, fencedOff: 0, duplicates: 0 });
  });

  it('renews the leases of a pipelined batch while it waits behind a slow one', {
    timeout: 120_000,
  }, async () => {
    // Claims of 5: the first fills its limit, so the holder claims the next 5 while the broker
    // has the first (pipelined), and that batch waits for the first one's acknowledgement.
    await twoRelays({ batchSize: 5, minBatchSize: 5 });
    await insertEvents(db.url, { count: 10, aggregates: 10 });
    if (own.proxy) own.proxy.latencyMs = 1000; // one produce round trip outlasts the lease
    holder.relay.start();
    await eventually('the holder holds both batches', async () => {
      const rows = await outboxRows(db.url);
      return rows.every((row) => row.status === 'in_flight' && row.lease_owner === 'holder') || undefined;
    });
    competitor.relay.start();
    await eventually(
      'every event published',
      async () => (await outboxRows(db.url)).every((row) => row.status === 'published') || undefined,
      90_000,
    );

    expect(await duplicatesAndTakeovers()).toEqual({ takenOver: 0, fencedOff: 0, duplicates: 0 });
    expect(await counterTotal(holder.metrics.leaseRenewals)).toBeGreaterThan(0);
  });
});
