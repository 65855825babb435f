import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario } from './support.ts';

useLeakGuard();

/** The groups' session timeout (kafkajs's default, kept by the services) plus 10 s. */
const TARGET_MS = 30_000 + 10_000;

describe('chaos on a three-broker cluster: the consumer groups’ coordinator frozen (SIGSTOP) past the session timeout, then thawed', () => {
  it('no group stops applying for longer than the session timeout plus 10 s, every group catches up; nothing lost, every event applied once, in order', {
    // 35 s frozen, then up to 120 s for the groups to catch up: longer than the other scenarios.
    timeout: 480_000,
  }, async () => {
    const report = await runChaosScenario('cluster-coordinator-frozen');
    expect(report.timeline.map((step) => step.what).join('\n')).toMatch(
      /^SIGSTOP broker \d \(pid \d+\), coordinator of /m,
    );
    expect(report.progress?.longestWithoutApplyingMsByGroup).toEqual({
      orders: expect.any(Number),
      inventory: expect.any(Number),
      billing: expect.any(Number),
    });
    for (const [group, windowMs] of Object.entries(report.progress?.longestWithoutApplyingMsByGroup ?? {}))
      expect(windowMs, `${group} applied nothing for this long`).toBeLessThanOrEqual(TARGET_MS);
    expectEveryInvariantHeld(report);
  });
});
