import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: the broker killed with kill -9 under load and restarted', () => {
  it('loses nothing, publishes no ghost, keeps per-order order and applies every event once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('broker-kill-9');
    expectEveryInvariantHeld(report);
    expect(report.timeline.map((step) => step.what)).toContain('kill -9 the broker');
  });
});
