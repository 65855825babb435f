import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos on a three-broker cluster: the broker leading the most partitions killed with kill -9 under load', () => {
  it('fails over: loses nothing, publishes no ghost, keeps per-order order and applies every event once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('cluster-leader-kill');
    expectEveryInvariantHeld(report);
    expect(report.timeline.map((step) => step.what).join('\n')).toMatch(
      /^kill -9 broker \d, leader of [1-9]\d* of/m,
    );
    // Two relays and two instances of every service ran, each answering throughout.
    expect(report.opsEndpoints.scrapes).toBeGreaterThan(0);
  });
});
