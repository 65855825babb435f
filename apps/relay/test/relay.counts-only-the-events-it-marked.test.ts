// A relay whose lease ran out while the broker had its batch (a long GC pause, a slow broker) finds
// at mark time that another relay owns the rows now: its mark updates nothing, the other relay
// publishes and marks them again. The first relay must not count those events as published by
// it, or the sum over relays of outbox_published_total exceeds the events there were.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { counterTotal, type InProcessRelay, startInProcessRelay } from './inProcessRelay.ts';

useLeakGuard();

let setup: InProcessRelay;

beforeAll(async () => {
  setup = await startInProcessRelay('relay_fenced', sharedKafkaBrokers());
});

afterAll(async () => {
  await setup?.dispose();
});

describe('a relay whose rows were taken over while it published', () => {
  it('counts only the events its mark really changed', { timeout: 60_000 }, async () => {
    await insertEvents(setup.db.url, { count: 6, aggregates: 6 });
    // While the broker has the batch, another relay takes half of it over (its lease "expired").
    setup.around.after = async (events) => {
      const taken = events.slice(0, 3).map((event) => event.id);
      await queryOnce(
        setup.db.url,
        `update outbox set lease_owner = 'other-relay' where id = any($1::uuid[])`,
        [taken],
      );
    };
    const step = await setup.relay.drainOnce();
    expect(step.claimed).toBe(6);

    const rows = await outboxRows(setup.db.url);
    expect(rows.filter((row) => row.status === 'published')).toHaveLength(3);
    expect(await counterTotal(setup.metrics.published)).toBe(3);
    expect(await counterTotal(setup.metrics.fencedOff)).toBe(3);
    expect(setup.relay.health.published).toBe(3);
  });
});
