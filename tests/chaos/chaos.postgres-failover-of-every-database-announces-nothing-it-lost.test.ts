import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { count, expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

// Orders, inventory and billing each on a primary and a standby of their own, all three failed
// over at once under load: inventory's reservations and billing's payments are lost with their
// primaries too, and their replies must be announced only once their standby holds them.
describe('chaos: every service database fails over at once', () => {
  it('with asynchronous standbys and the wait, loses commits and announces none of them', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('postgres-failover-all-async');
    expectEveryInvariantHeld(report);
    expect(count(report, 'failover-announces-no-lost-order', 'ordersLost')).toBeGreaterThan(0);
    expect(count(report, 'failover-announces-no-lost-order', 'ghostEvents')).toBe(0);
    expect(count(report, 'failover-announces-no-lost-order', 'effectsOfOrdersThatDoNotExist')).toBe(0);
  });

  it('with synchronous standbys, loses nothing', { timeout: SCENARIO_TIMEOUT_MS }, async () => {
    const report = await runChaosScenario('postgres-failover-all-sync');
    expectEveryInvariantHeld(report);
    expect(count(report, 'failover-announces-no-lost-order', 'ordersLost')).toBe(0);
    expect(count(report, 'failover-announces-no-lost-order', 'ghostEvents')).toBe(0);
  });
});
