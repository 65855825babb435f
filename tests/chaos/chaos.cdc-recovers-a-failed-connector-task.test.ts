import { logicalDecodingUnavailable } from '@outbox/devstack/logical-decoding';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { describe, expect, it } from 'vitest';
import { expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

// CDC needs wal_level=logical, which .ci/run turns on before the tests; elsewhere the test says so
// and skips rather than restarting a PostgreSQL that other tests use.
const unavailable = await logicalDecodingUnavailable(testPostgresUrl);
if (unavailable) console.warn(`chaos.cdc-recovers-a-failed-connector-task skipped: ${unavailable}`);

useLeakGuard();

describe.skipIf(unavailable !== undefined)(
  "chaos in CDC mode: the orders connector's task FAILED under load, restarted by the operator through the REST API",
  () => {
    it('loses nothing once the task is restarted, publishes no ghost, keeps per-order order and applies every event once', {
      timeout: SCENARIO_TIMEOUT_MS,
    }, async () => {
      const report = await runChaosScenario('cdc-connector-task-failed');
      expectEveryInvariantHeld(report);
      const steps = report.timeline.map((step) => step.what).join('\n');
      // The task really failed, of the cause the scenario planted, before the operator restarted it.
      expect(steps).toMatch(/^outbox-orders task FAILED: .+/m);
      expect(steps).toMatch(/restart\?includeTasks=true&onlyFailed=true/);
    });
  },
);
