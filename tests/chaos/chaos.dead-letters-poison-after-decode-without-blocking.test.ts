import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { count, expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: events that decode but cannot be applied, under load', () => {
  it('dead-letters each of them and still applies every other event once, in order', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('poison-after-decode');
    expectEveryInvariantHeld(report);
    // Three poison events, each dead-lettered by both inventory and billing; nothing failed at the relay.
    expect(count(report, 'dead-letters-accounted', 'failedRows')).toBe(0);
    expect(count(report, 'dead-letters-accounted', 'dltMessages')).toBeGreaterThanOrEqual(6);
  });
});
