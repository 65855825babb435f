import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, topicPrefix } from './relayProcess.ts';

/**
 * Only the head event of an aggregate is claimable, so a batch holds at most one event per
 * aggregate and is smaller than RELAY_BATCH_SIZE whenever the backlog sits on few aggregates.
 * Publishing that batch makes each aggregate's next event claimable: there is still work, and no
 * NOTIFY will come for it (nothing was inserted). The relay must claim again at once, not sleep
 * the poll interval: the mark reports the aggregates it unblocked and wakes the loop (relay.ts,
 * #loop and #published), which otherwise sleeps after a claim that did not fill its limit.
 */

useLeakGuard();

const POLL_MS = 5000;
const brokers = sharedKafkaBrokers();
const prefix = topicPrefix('relay-backlog');
let db: TestDatabase;
let relay: ServiceProcess;

beforeAll(async () => {
  db = await createOutboxDatabase('relay_backlog');
  relay = await startRelay('relay-backlog', {
    DATABASE_URL: db.url,
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: prefix,
    RELAY_ID: 'relay-backlog',
    RELAY_POLL_INTERVAL_MS: String(POLL_MS),
  });
  await sleep(300);
});

afterAll(async () => {
  await relay?.stop();
  await db?.drop();
});

describe('a backlog of one aggregate', () => {
  it('is drained in one go, not one event per poll interval', { timeout: 30_000 }, async () => {
    // Ten events of one aggregate, committed together (one NOTIFY).
    await insertEvents(db.url, { count: 10, aggregates: 1, aggregateIdPrefix: 'hot-' });
    await sleep(POLL_MS);
    const rows = await outboxRows(db.url);
    const published = rows.filter((row) => row.status === 'published').length;
    console.log(`${published} of 10 published one poll interval (${POLL_MS} ms) after the commit`);
    expect(published).toBe(10);
  });
});
