import { logicalDecodingUnavailable } from '@outbox/devstack/logical-decoding';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { testPostgresUrl } from '@outbox/devstack/testing/test-database';
import { describe, expect, it } from 'vitest';
import { count, expectEveryInvariantHeld, runChaosScenario, SCENARIO_TIMEOUT_MS } from './support.ts';

// CDC needs wal_level=logical, which .ci/run turns on before the tests; elsewhere the test says so
// and skips rather than restarting a PostgreSQL that other tests use.
const unavailable = await logicalDecodingUnavailable(testPostgresUrl);
if (unavailable) console.warn(`chaos.cdc-connector-registered-under-load skipped: ${unavailable}`);

useLeakGuard();

describe.skipIf(unavailable !== undefined)(
  'chaos in CDC mode: the connectors registered while orders are written, each slot created with transactions open',
  () => {
    it('puts every outbox row on its topic and applies every event once', {
      timeout: SCENARIO_TIMEOUT_MS,
    }, async () => {
      const report = await runChaosScenario('cdc-connector-registered-under-load');
      expectEveryInvariantHeld(report);
      expect(report.relayMode).toBe('debezium');
      const steps = report.timeline.map((step) => step.what);
      expect(steps).toContain('register the three Debezium connectors while orders are written');
      expect(steps.some((step) => step.startsWith('restored: connectors running'))).toBe(true);
      expect(count(report, 'every-event-published', 'publishedAndOnTopic')).toBe(
        count(report, 'every-event-published', 'outboxRows'),
      );
    });
  },
);
