import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos on a three-broker cluster: the consumer groups’ coordinator killed with kill -9 under load', () => {
  it('no group stops applying for more than 10 s; nothing lost, no ghost, every event applied once, in order', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('cluster-coordinator-kill');
    expect(report.timeline.map((step) => step.what).join('\n')).toMatch(
      /^kill -9 broker \d, coordinator of /m,
    );
    expect(report.progress?.longestWithoutApplyingMsByGroup).toEqual({
      orders: expect.any(Number),
      inventory: expect.any(Number),
      billing: expect.any(Number),
    });
    for (const [group, windowMs] of Object.entries(report.progress?.longestWithoutApplyingMsByGroup ?? {}))
      expect(windowMs, `${group} applied nothing for this long`).toBeLessThanOrEqual(10_000);
    expectEveryInvariantHeld(report);
  });
});
