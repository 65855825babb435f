import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: PostgreSQL restarted twice (immediate mode) under load', () => {
  it('loses nothing, publishes no ghost, keeps per-order order and applies every event once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('postgres-restart');
    expectEveryInvariantHeld(report);
  });
});
