import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: each consumer killed after its commit and before its offset commit', () => {
  it('loses nothing, publishes no ghost, keeps per-order order and applies every event once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('consumer-kill-after-commit');
    expectEveryInvariantHeld(report);
  });
});
