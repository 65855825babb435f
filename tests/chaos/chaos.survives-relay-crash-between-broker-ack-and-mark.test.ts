import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { count, expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: a relay killed after the broker ack and before marking the batch published', () => {
  it('loses nothing, publishes no ghost, keeps per-order order and applies every event once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('relay-crash-after-publish');
    expectEveryInvariantHeld(report);
    // The crash really came after the ack: the re-sent events are on the topic twice.
    expect(count(report, 'duplicates-reconcile', 'order.events duplicates')).toBeGreaterThan(0);
  });
});
