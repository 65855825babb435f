import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { count, expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: poison events in the orders outbox under load', () => {
  it('loses nothing, publishes no ghost, keeps per-order order and applies every event once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('poison-events');
    expectEveryInvariantHeld(report);
    // The oversized row failed at the relay; the two unreadable events reached order.events.dlt from
    // both inventory and billing.
    expect(count(report, 'dead-letters-accounted', 'failedRows')).toBe(1);
    expect(count(report, 'dead-letters-accounted', 'dltMessages')).toBeGreaterThanOrEqual(4);
  });
});
