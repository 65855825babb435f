import { setTimeout as sleep } from 'node:timers/promises';
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
  startRelay,
  statusCounts,
  topicPrefix,
} from './relayProcess.ts';

useLeakGuard();

const EVENTS = 3000;
const AGGREGATES = 100;
const BATCH_SIZE = 100;
// A relay catching up holds two batches: one with the broker and the next one claimed (relay.ts).
const PIPELINE_DEPTH = 2;
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

async function outboxCounts(): Promise<{ published: number; leased: number }> {
  const { rows } = await client.query<{ published: number; leased: number }>(
    `select count(*) filter (where status = 'published')::int as published,
            count(*) filter (where status = 'in_flight')::int as leased
       from outbox`,
  );
  return rows[0] ?? { published: 0, leased: 0 };
}

/** Statements of other sessions still running on this database. */
async function activeStatements(): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and state = 'active'`,
  );
  return rows[0]?.n ?? 0;
}

describe('relay killed with kill -9 mid-stream', () => {
  it('loses nothing; another relay republishes at most the killed relay’s in-flight batches', {
    timeout: 90_000,
  }, async () => {
    const first = await startRelay('relay-kill', relayEnv('relay-1'));
    relays.push(first);
    await insertEvents(db.url, { count: EVENTS, aggregates: AGGREGATES });

    // Kill it while it holds a leased batch, with some events published. Between a mark and the
    // commit of the next claim (a claim can take longer than a publish) it holds none, and a
    // claim cut off by the kill may be rolled back: so freeze it first (SIGSTOP: statements it sent
    // finish on the server), look, and kill it only when it holds a batch; else let it go on.
    const pid = first.pid as number;
    for (const deadline = Date.now() + 30_000; ; await sleep(5)) {
      if (Date.now() > deadline) throw new Error('relay-1 never held a leased batch after 300 events');
      if ((await outboxCounts()).published < 300) continue;
      process.kill(pid, 'SIGSTOP');
      await eventually('relay-1 statements finished', async () =>
        (await activeStatements()) === 0 ? true : undefined,
      );
      if ((await outboxCounts()).leased > 0) break;
      process.kill(pid, 'SIGCONT');
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
    expect(inFlightAtKill).toBeLessThanOrEqual(PIPELINE_DEPTH * BATCH_SIZE);

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
    // Only the killed relay's in-flight batches can have been published twice, and only once more.
    expect(duplicateIds).toBeLessThanOrEqual(inFlightAtKill);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(2);
    // Per aggregate, first occurrences are in seq order.
    for (const [aggregateId, ids] of idsByAggregate(rows))
      expect(byKey.get(aggregateId), aggregateId).toEqual(ids);
  });
});
