// A publish that takes longer than the lease (a slow broker) must not let another relay take the
// batch over and publish it a second time: the relay renews its lease while the broker has it.
import { setTimeout as sleep } from 'node:timers/promises';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { insertEvents, outboxRows } from '@outbox/devstack/testing/outbox-database';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { claimBatch } from '@outbox/outbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { counterTotal, type InProcessRelay, startInProcessRelay } from './inProcessRelay.ts';

useLeakGuard();

const LEASE_MS = 600;
let setup: InProcessRelay;

beforeAll(async () => {
  setup = await startInProcessRelay('relay_renew', sharedKafkaBrokers(), { leaseMs: LEASE_MS });
});

afterAll(async () => {
  await setup?.dispose();
});

describe('a publish slower than the lease', () => {
  it('keeps the rows leased to this relay until they are marked', { timeout: 60_000 }, async () => {
    await insertEvents(setup.db.url, { count: 5, aggregates: 5 });
    const takenOver: string[] = [];
    // While the broker "takes" four leases long, a competing relay keeps trying to claim.
    setup.around.before = async () => {
      for (const deadline = Date.now() + 4 * LEASE_MS; Date.now() < deadline; await sleep(50)) {
        const rows = await claimBatch(setup.pool, 'competitor', 30_000, 10);
        takenOver.push(...rows.map((row) => row.id));
      }
    };
    await setup.relay.drainOnce();

    expect(takenOver, 'rows another relay took over while this one published').toEqual([]);
    expect((await outboxRows(setup.db.url)).map((row) => row.status)).toEqual(Array(5).fill('published'));
    expect(await counterTotal(setup.metrics.leaseRenewals)).toBeGreaterThan(0);
  });
});
