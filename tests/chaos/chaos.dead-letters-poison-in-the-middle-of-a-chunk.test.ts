import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { count, expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: poison events inside chunks of a consumer catching up on a backlog', () => {
  it('dead-letters each poison event alone and applies the rest of its chunk once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('poison-mid-chunk');
    expectEveryInvariantHeld(report);
    // Three poison events, each dead-lettered by both inventory and billing; nothing failed at the relay.
    expect(count(report, 'dead-letters-accounted', 'failedRows')).toBe(0);
    expect(count(report, 'dead-letters-accounted', 'dltMessages')).toBeGreaterThanOrEqual(6);
  });
});
