import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { count, expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: the broker stopped for 12 s under load', () => {
  it('loses nothing, publishes no ghost, keeps per-order order and applies every event once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('broker-stopped-long');
    expectEveryInvariantHeld(report);
    // An outage is not the events' fault: nothing was dead-lettered for it.
    expect(count(report, 'dead-letters-accounted', 'failedRows')).toBe(0);
  });
});
