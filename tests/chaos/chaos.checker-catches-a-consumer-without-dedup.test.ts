// The checker must be able to fail. The orders consumer is built without its duplicate check
// (INBOX_DEDUP=off, a test-only switch refused in production) and killed between its commit and
// its offset commit, so one reply is delivered twice and applied twice.
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: a broken build whose orders consumer does not deduplicate', () => {
  it('fails applied-exactly-once, naming the reply recorded twice', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('broken-build-dedup-off');
    expect(report.error).toBeUndefined();
    expect(report.passed).toBe(false);
    const failed = report.invariants.filter((result) => !result.passed);
    expect(failed.map((result) => result.name)).toEqual(['applied-exactly-once']);
    expect(failed[0]?.violations.join('\n')).toMatch(
      /orders history entries per (STOCK|PAYMENT)_[A-Z]+ reply: expected 1: \d+ \(e\.g\. [0-9a-f-]{36} \(2\)/,
    );
  });
});
