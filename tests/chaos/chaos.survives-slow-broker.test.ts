import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: every client 150 ms away from the broker for 10 s', () => {
  it('loses nothing, publishes no ghost, keeps per-order order and applies every event once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('slow-broker');
    expectEveryInvariantHeld(report);
  });
});
