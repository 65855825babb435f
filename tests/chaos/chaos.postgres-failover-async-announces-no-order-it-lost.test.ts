import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, expect, it } from 'vitest';
import { count, expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: the orders database fails over to an asynchronous standby under load', () => {
  it('loses only the orders the standby never received, and announces none of them', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('postgres-failover-async');
    expectEveryInvariantHeld(report);
    // The standby stopped receiving 2 s before the kill: the failover certainly lost orders...
    expect(count(report, 'failover-announces-no-lost-order', 'ordersLost')).toBeGreaterThan(0);
    // ...and none of them reached Kafka or another service.
    expect(count(report, 'failover-announces-no-lost-order', 'ghostEvents')).toBe(0);
    expect(count(report, 'failover-announces-no-lost-order', 'effectsOfOrdersThatDoNotExist')).toBe(0);
  });
});
