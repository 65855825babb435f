import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, topicPrefix } from './relayProcess.ts';

useLeakGuard();

const brokers = sharedKafkaBrokers();
const prefix = topicPrefix('relay-wakeup');
let db: TestDatabase;
let client: pg.Client;
let relay: ServiceProcess | undefined;
let counter = 0;

beforeAll(async () => {
  db = await createOutboxDatabase('relay_wakeup');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});

afterAll(async () => {
  await relay?.stop();
  await client?.end();
  await db?.drop();
});

const start = async (pollIntervalMs: number) => {
  await relay?.stop();
  relay = await startRelay('relay-wakeup', {
    DATABASE_URL: db.url,
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: prefix,
    RELAY_ID: `relay-poll-${pollIntervalMs}`,
    RELAY_POLL_INTERVAL_MS: String(pollIntervalMs),
  });
  // Let it finish its first (empty) drain and go to sleep.
  await sleep(300);
};

/** Commit one event of a fresh aggregate; resolve with the ms until the relay marked it published. */
async function publishLatency(timeoutMs: number): Promise<number> {
  const aggregate = `e${counter++}-`;
  const committed = Date.now();
  await insertEvents(db.url, { count: 1, aggregates: 1, aggregateIdPrefix: aggregate });
  const deadline = committed + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await client.query<{ status: string }>(
      'select status from outbox where aggregate_id = $1',
      [`${aggregate}0`],
    );
    if (rows[0]?.status === 'published') return Date.now() - committed;
    await sleep(20);
  }
  throw new Error(`event ${aggregate}0 not published within ${timeoutMs} ms`);
}

/** The backend pid of the relay's LISTEN connection (the only session whose last query was LISTEN). */
async function listenPid(): Promise<number | undefined> {
  const { rows } = await client.query<{ pid: number }>(
    `select pid from pg_stat_activity
      where datname = current_database() and query ilike 'listen%' and pid <> pg_backend_pid()`,
  );
  return rows[0]?.pid;
}

describe('relay wake-up', () => {
  it('publishes within a second on NOTIFY, with a 60 s poll interval', { timeout: 60_000 }, async () => {
    await start(60_000);
    await publishLatency(10_000); // the first publish also creates the topic
    const latencies = [await publishLatency(5000), await publishLatency(5000), await publishLatency(5000)];
    console.log(`NOTIFY latencies (poll 60 s): ${latencies.join(', ')} ms`);
    for (const latency of latencies) expect(latency).toBeLessThan(1000);
  });

  it('polls when no NOTIFY comes (trigger disabled)', { timeout: 60_000 }, async () => {
    await start(1500);
    await client.query('alter table outbox disable trigger outbox_notify_after_insert');
    try {
      const latencies = [await publishLatency(10_000), await publishLatency(10_000)];
      console.log(`poll latencies (trigger disabled, poll 1.5 s): ${latencies.join(', ')} ms`);
      for (const latency of latencies) expect(latency).toBeLessThan(2 * 1500);
    } finally {
      await client.query('alter table outbox enable trigger outbox_notify_after_insert');
    }
  });

  it('polls while the LISTEN connection is gone, and NOTIFY works again after it reconnects', {
    timeout: 60_000,
  }, async () => {
    // A poll interval long enough that a publish within 500 ms three times in a row is NOTIFY.
    await start(5000);
    const before = await listenPid();
    expect(before).toBeDefined();
    await client.query('select pg_terminate_backend($1)', [before]);
    // Committed while nobody listens. Observed: it goes out ~300 ms after the relay LISTENs again
    // (1.1-1.4 s), before the 5 s poll: Postgres may hand a new listener notifications committed
    // just before its LISTEN (async.c). Either way it must not wait for more than the poll.
    // (The poll alone is shown by the trigger-disabled case above.)
    const lost = await publishLatency(15_000);
    console.log(`latency with the LISTEN connection terminated (poll 5 s): ${lost} ms`);
    expect(lost).toBeLessThan(2 * 5000);

    const after = await eventually(
      'relay LISTENs again on a new connection',
      async () => {
        const pid = await listenPid();
        return pid !== undefined && pid !== before ? pid : undefined;
      },
      10_000,
    );
    expect(after).not.toBe(before);
    const latencies = [await publishLatency(5000), await publishLatency(5000), await publishLatency(5000)];
    console.log(`NOTIFY latencies after the reconnect (poll 5 s): ${latencies.join(', ')} ms`);
    for (const latency of latencies) expect(latency).toBeLessThan(500);
  });
});
