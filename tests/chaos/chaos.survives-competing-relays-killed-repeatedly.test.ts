import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: three relays on one outbox, one after another killed with kill -9', () => {
  it('loses nothing, publishes no ghost, keeps per-order order and applies every event once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('competing-relays');
    expectEveryInvariantHeld(report);
  });
});
