import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { describe, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

useLeakGuard();

describe('chaos: a payment provider slower than a transaction may last, under load', () => {
  it('holds no transaction open for it, decides every order, applies every event once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const report = await runChaosScenario('slow-payment-provider');
    expectEveryInvariantHeld(report);
  });
});
