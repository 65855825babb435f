import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  firstOccurrencesByKey,
  idsByAggregate,
  metricValue,
  sleep,
  startRelay,
  statusCounts,
  topicPrefix,
} from './relayProcess.ts';

useLeakGuard();

const EVENTS = 3000;
const AGGREGATES = 100;
const BATCH_SIZE = 100;
const brokers = sharedKafkaBrokers();
const prefix = topicPrefix('relay-kill');
let db: TestDatabase;
let client: pg.Client;
const relays: ServiceProcess[] = [];

const relayEnv = (id: string) => ({
  DATABASE_URL: db.url,
  KAFKA_BROKERS: brokers,
  KAFKA_TOPIC_PREFIX: prefix,
  RELAY_ID: id,
  RELAY_BATCH_SIZE: String(BATCH_SIZE),
  RELAY_LEASE_MS: '2000',
});

beforeAll(async () => {
  db = await createOutboxDatabase('relay_kill');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});

afterAll(async () => {
  await Promise.allSettled(relays.map((relay) => relay.stop()));
  await client?.end();
  await db?.drop();
});

describe('relay killed with kill -9 mid-stream', () => {
  it('loses nothing; another relay republishes at most the killed relay’s in-flight batch', {
    timeout: 90_000,
  }, async () => {
    const first = await startRelay('relay-kill', relayEnv('relay-1'));
    relays.push(first);
    await insertEvents(db.url, { count: EVENTS, aggregates: AGGREGATES });

    // Kill it while it is publishing a batch: some events published, a batch leased.
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(5)) {
      const { rows } = await client.query<{ published: number; leased: number }>(
        `select count(*) filter (where status = 'published')::int as published,
                count(*) filter (where status = 'in_flight')::int as leased
           from outbox`,
      );
      if ((rows[0]?.published ?? 0) >= 300 && (rows[0]?.leased ?? 0) > 0) break;
    }
    await first.kill();
    const { rows: inFlightRows } = await client.query<{ n: number; published: number }>(
      `select count(*) filter (where status = 'in_flight' and lease_owner = 'relay-1')::int as n,
              count(*) filter (where status = 'published')::int as published
         from outbox`,
    );
    const inFlightAtKill = inFlightRows[0]?.n ?? -1;
    const publishedAfterKill = inFlightRows[0]?.published ?? -1;
    console.log(`killed relay-1 with ${publishedAfterKill} published, ${inFlightAtKill} in flight (leased)`);
    expect(publishedAfterKill).toBeGreaterThan(0);
    expect(publishedAfterKill).toBeLessThan(EVENTS);
    expect(inFlightAtKill).toBeGreaterThan(0);
    expect(inFlightAtKill).toBeLessThanOrEqual(BATCH_SIZE);

    const second = await startRelay('relay-kill', relayEnv('relay-2'));
    relays.push(second);
    const started = Date.now();
    await eventually(
      'every event published',
      async () => ((await statusCounts(db.url)).published === EVENTS ? true : undefined),
      60_000,
    );
    console.log(`relay-2 finished ${Date.now() - started} ms after it started (lease 2 s)`);
    // It took over exactly the rows relay-1 held, once their lease expired.
    expect(await metricValue(second, 'outbox_relay_leases_expired_total')).toBe(inFlightAtKill);

    const rows = await outboxRows(db.url);
    const messages = await readTopic(brokers, `${prefix}order.events`, { timeoutMs: 60_000 });
    const { byKey, counts, duplicateIds } = firstOccurrencesByKey(messages);
    console.log(`duplicates on the topic: ${duplicateIds} ids (${messages.length - EVENTS} extra messages)`);
    // None lost, nothing foreign.
    expect([...counts.keys()].sort()).toEqual(rows.map((row) => row.id).sort());
    // Only the killed relay's in-flight batch can have been published twice, and only once more.
    expect(duplicateIds).toBeLessThanOrEqual(inFlightAtKill);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(2);
    // Per aggregate, first occurrences are in seq order.
    for (const [aggregateId, ids] of idsByAggregate(rows))
      expect(byKey.get(aggregateId), aggregateId).toEqual(ids);
  });
});
