// A batch now carries several events of one aggregate. When the broker refuses one of them, the
// relay must not send that aggregate's later events ahead of it: they go back to the outbox unsent,
// held behind the refused event (dead-lettered here), while every other aggregate goes out.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InProcessRelay, startInProcessRelay } from './inProcessRelay.ts';
import { topicPrefix } from './relayProcess.ts';

useLeakGuard();

const brokers = sharedKafkaBrokers();
const prefix = topicPrefix('relay-heldback');
let setup: InProcessRelay;

const order = {
  orderId: '6f1c1a52-3f0e-4a55-9a52-1c3c0c7d9e01',
  customerId: 'customer-held',
  currency: 'EUR',
  totalCents: '1999',
  items: [{ sku: 'MS-202', quantity: 1, unitPriceCents: '1999' }],
};

beforeAll(async () => {
  setup = await startInProcessRelay('relay_heldback', brokers, { topicPrefix: prefix, batchSize: 20 });
  const one = (aggregateIdPrefix: string, payload?: unknown) =>
    insertEvents(setup.db.url, {
      count: 1,
      aggregates: 1,
      aggregateIdPrefix,
      ...(payload ? { payload } : {}),
    });
  await insertEvents(setup.db.url, { count: 6, aggregates: 2, aggregateIdPrefix: 'other-' });
  await one('held-');
  // ~2 MB: above the broker's default max message size, refused for good (dead-lettered).
  await one('held-', { ...order, note: 'x'.repeat(2 * 1024 * 1024) });
  await one('held-');
  await one('held-');
  await insertEvents(setup.db.url, { count: 4, aggregates: 2, aggregateIdPrefix: 'other-' });
});

afterAll(async () => {
  await setup?.dispose();
});

describe('a refused event in the middle of its aggregate’s run', () => {
  it('holds the run’s later events back unsent while the other aggregates go out', {
    timeout: 90_000,
  }, async () => {
    const step = await setup.relay.drainOnce();
    expect(step.claimed).toBe(14); // one batch: every event, four of them of `held-0`

    const rows = await outboxRows(setup.db.url);
    const held = rows.filter((row) => row.aggregate_id === 'held-0');
    expect(held.map((row) => row.status)).toEqual(['published', 'failed', 'pending', 'pending']);
    expect(
      rows.filter((row) => row.aggregate_id !== 'held-0').every((row) => row.status === 'published'),
    ).toBe(true);
    // Given back without using up an attempt, and not claimable while the dead letter is there.
    expect(held.slice(2).map((row) => row.attempts)).toEqual([0, 0]);
    expect((await setup.relay.drainOnce()).claimed).toBe(0);

    const messages = await readTopic(brokers, `${prefix}order.events`);
    expect(messages.filter((m) => m.key === 'held-0').map((m) => m.eventId)).toEqual([held[0]?.id]);
  });
});
