import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: a relay killed with a batch at the broker and the next batch claimed behind it', () => {
  it('loses nothing, publishes no ghost, keeps per-order order and applies every event once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('relay-kill-9-pipelined');
    expectEveryInvariantHeld(report);
    // The fault really fired in the pipelined state: the dead relay held two leased batches.
    const kills = report.timeline.filter((step) => /killed itself holding/.test(step.what));
    expect(kills.length, report.timeline.map((step) => step.what).join('\n')).toBeGreaterThan(0);
    for (const kill of kills) expect(kill.what).toMatch(/holding 2 leased batches/);
  });
});
