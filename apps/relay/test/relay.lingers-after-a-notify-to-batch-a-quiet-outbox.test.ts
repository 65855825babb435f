// At a low steady rate each commit's NOTIFY wakes an idle relay at once, and its claim finds one
// row: one claim, one publish, one mark (and downstream one consumer transaction) per event. With
// RELAY_LINGER_MS the relay woken from idle waits that long before claiming, so the rows
// committed meanwhile go out as one batch (relay.ts #idle). stop() must not wait for the linger.
import { setTimeout as sleep } from 'node:timers/promises';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { loadConfig } from '@outbox/runtime/config';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../src/config.ts';
import { type InProcessRelay, startInProcessRelay } from './inProcessRelay.ts';

useLeakGuard();

const brokers = sharedKafkaBrokers();

/**
 * Runs `test` with a relay listening for NOTIFY (its poll interval too long to matter) that has
 * published a first event (creating the topic) and gone idle, and the size of each publish since.
 */
async function withIdleRelay(
  label: string,
  lingerMs: number,
  test: (setup: InProcessRelay, batches: number[]) => Promise<void>,
): Promise<void> {
  const setup = await startInProcessRelay(label, brokers, { lingerMs, pollIntervalMs: 60_000 });
  try {
    const batches: number[] = [];
    setup.around.before = async (events) => {
      batches.push(events.length);
    };
    // Committed before the relay starts: its first claim takes it, with no wake-up to linger after.
    await insertEvents(setup.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'warm-up-' });
    await setup.listener.listen();
    setup.relay.start();
    await publishedCount(setup, 1);
    await sleep(300); // its mark done, back to sleep
    batches.length = 0;
    await test(setup, batches);
  } finally {
    await setup.dispose();
  }
}

/**
 * Commit `count` events of distinct aggregates, each in its own transaction, `gapMs` apart, on one
 * connection opened before the first (no connection set up between the commits).
 */
async function commitApart(setup: InProcessRelay, count: number, gapMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: setup.db.url });
  await client.connect();
  try {
    for (let n = 0; n < count; n++) {
      await insertEvents(client, { count: 1, aggregates: 1, aggregateIdPrefix: `apart-${n}-` });
      await sleep(gapMs);
    }
  } finally {
    await client.end();
  }
}

const publishedCount = (setup: InProcessRelay, count: number) =>
  eventually(`${count} events published`, async () => {
    const rows = await outboxRows(setup.db.url);
    return rows.filter((row) => row.status === 'published').length >= count ? true : undefined;
  });

describe('an idle relay woken by NOTIFY', () => {
  it('with a linger, publishes events committed apart during it as one batch', {
    timeout: 60_000,
  }, async () => {
    await withIdleRelay('relay_linger', 1000, async (setup, batches) => {
      // Committed within a few hundred ms, well inside the 1 s linger even on a busy machine.
      await commitApart(setup, 5, 20);
      await publishedCount(setup, 6);
      expect(batches).toEqual([5]);
    });
  });

  it('without one (the default), claims at once: the same events go out in several batches', {
    timeout: 60_000,
  }, async () => {
    await withIdleRelay('relay_no_linger', 0, async (setup, batches) => {
      await commitApart(setup, 5, 100);
      await publishedCount(setup, 6);
      expect(batches.reduce((sum, size) => sum + size, 0)).toBe(5);
      expect(batches.length).toBeGreaterThan(1);
    });
  });

  it('stops at once while it lingers, leaving the event for the next claim', {
    timeout: 60_000,
  }, async () => {
    await withIdleRelay('relay_linger_stop', 30_000, async (setup, batches) => {
      await commitApart(setup, 1, 300); // its NOTIFY has arrived: the relay lingers
      const started = performance.now();
      await setup.relay.stop();
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(batches).toEqual([]);
      const rows = await outboxRows(setup.db.url);
      expect(rows.filter((row) => row.status === 'pending')).toHaveLength(1);
    });
  });
});

describe('RELAY_LINGER_MS', () => {
  const env = { DATABASE_URL: testPostgresUrl, KAFKA_BROKERS: '127.0.0.1:9092' };

  it('is 75 ms unless set, and refuses a value beyond a second or not a whole number, naming it', () => {
    expect(loadConfig('relay', configSchema, env).RELAY_LINGER_MS).toBe(75);
    expect(loadConfig('relay', configSchema, { ...env, RELAY_LINGER_MS: '20' }).RELAY_LINGER_MS).toBe(20);
    for (const bad of ['1001', '-1', '2.5', 'soon']) {
      expect(() => loadConfig('relay', configSchema, { ...env, RELAY_LINGER_MS: bad })).toThrow(
        /RELAY_LINGER_MS: /,
      );
    }
  });
});
