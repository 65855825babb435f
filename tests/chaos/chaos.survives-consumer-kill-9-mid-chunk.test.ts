import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: consumers killed with kill -9 inside a chunk transaction, before COMMIT', () => {
  it('keeps nothing of the dead chunk and applies every event of it once after the restart', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('consumer-kill-mid-chunk');
    expectEveryInvariantHeld(report);
    // Each consumer really died mid-chunk (the fault fired), rather than being restarted cleanly.
    const timeline = report.timeline.map((step) => step.what);
    for (const name of ['inventory', 'billing', 'orders'])
      expect(timeline).toContain(`${name} killed itself mid-chunk`);
  });
});
