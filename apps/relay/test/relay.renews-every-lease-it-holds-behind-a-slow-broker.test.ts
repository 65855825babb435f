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

// Long enough that renewal (every third of it) keeps up on a busy machine; the broker's delays
// below are what make the holder keep rows longer than this.
const LEASE_MS = 5000;
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
  // Connected and the topic created while the broker is still fast: what follows is slow sends.
  await insertEvents(db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'warm-up-' });
  await holder.relay.drainOnce();
}

function brokerDelay(ms: number) {
  if (own.proxy) own.proxy.latencyMs = ms;
}

afterEach(async () => {
  await competitor?.dispose();
  await holder?.dispose();
  await db?.drop();
  brokerDelay(0);
});

/** What the competitor took over and what the holder could not mark, and the topic's duplicates. */
async function duplicatesAndTakeovers() {
  brokerDelay(0);
  const messages = await readTopic(own.broker.brokers, `${prefix}order.events`);
  return {
    takenOver: await counterTotal(competitor.metrics.leaseTakeovers),
    fencedOff: await counterTotal(holder.metrics.fencedOff),
    duplicates: firstOccurrencesByKey(messages).duplicateIds,
  };
}

describe('two relays, the broker seconds away', () => {
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
    brokerDelay(1000);
    holder.around.before = async () => competitor.relay.start(); // once the holder has the rows
    const started = Date.now();
    await holder.relay.drainOnce();
    // The one-by-one retry outlasted the lease many times over: the gap was real.
    expect(Date.now() - started).toBeGreaterThan(2 * LEASE_MS);

    const statuses = (await outboxRows(db.url)).map((row) => row.status).sort();
    expect(statuses).toEqual(['failed', ...Array(10).fill('published')]);
    // Duplicates may come from the holder itself: the broker can write the refused batch's other
    // partition before the one-at-a-time retry sends those events again (publisher.ts). None may
    // come from the competitor.
    expect(await duplicatesAndTakeovers()).toMatchObject({ takenOver: 0, fencedOff: 0 });
  });

  it('renews the leases of a pipelined batch while it waits behind a slow one', {
    timeout: 120_000,
  }, async () => {
    // Claims of 5: the first fills its limit, so the holder claims the next 5 while the broker
    // has the first (pipelined), and that batch waits for the first one's acknowledgement.
    await twoRelays({ batchSize: 5, minBatchSize: 5 });
    await insertEvents(db.url, { count: 10, aggregates: 10 });
    brokerDelay(3500); // one produce round trip (7 s) outlasts the lease
    holder.relay.start();
    await eventually('the holder holds both batches', async () => {
      const held = (await outboxRows(db.url)).filter((row) => row.lease_owner === 'holder');
      return held.length === 10 || undefined;
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
