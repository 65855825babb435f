import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos on a three-broker cluster: two brokers down, fewer replicas than min.insync.replicas', () => {
  it('keeps taking orders, acknowledges no write to one replica, and drains when a second broker returns', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('cluster-two-brokers-down');
    expectEveryInvariantHeld(report);
    // The API kept answering 201 while nothing could be published: the outbox took the orders.
    const serverErrors = Object.keys(report.load.rejected).filter((reason) => reason.startsWith('5'));
    expect(serverErrors, 'answers other than 201 and the load mix’s deliberate 4xx').toEqual([]);
    expect(report.progress?.longestWithoutPublishingMs).toBeGreaterThan(5_000);
  });
});
