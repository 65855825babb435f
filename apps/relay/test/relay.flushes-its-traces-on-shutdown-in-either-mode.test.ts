// On SIGTERM the relay's process shell stops the mode, closes what it used and, last, flushes the
// spans it still buffers (packages/runtime/src/tracing.ts, shutdownTracing), in polling mode and
// in debezium mode alike. The exporter here would wait ten minutes before sending a batch, so a
// span reaches the collector before the process exits only if the shutdown flushed it.
import { freePort } from '@outbox/devstack/ports';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { startOtlpReceiver } from '@outbox/devstack/testing/otlp-receiver';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, topicPrefix } from './relayProcess.ts';

useLeakGuard();

let db: TestDatabase;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let relay: ServiceProcess | undefined;

beforeAll(async () => {
  db = await createOutboxDatabase('relay_trace_flush');
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await relay?.kill();
  await receiver?.close();
  await db?.drop();
});

/** What each mode needs besides the database; Kafka and Kafka Connect are not needed to trace a request. */
const modes = {
  polling: {},
  debezium: {
    RELAY_MODE: 'debezium',
    RELAY_CONNECTOR: 'outbox-trace-flush',
    RELAY_REPLICATION_SLOT: 'outbox_trace_flush',
  },
} as const;

describe('the relay on SIGTERM', () => {
  for (const [mode, settings] of Object.entries(modes)) {
    it(`exports the spans it holds before it exits, in ${mode} mode`, { timeout: 60_000 }, async () => {
      const service = `relay-flush-${mode}`;
      const nobody = `127.0.0.1:${await freePort()}`;
      relay = await startRelay(service, {
        DATABASE_URL: db.url,
        KAFKA_BROKERS: [nobody],
        KAFKA_TOPIC_PREFIX: topicPrefix(service),
        ...(mode === 'debezium' ? { RELAY_CONNECT_URL: `http://${nobody}` } : {}),
        ...settings,
        ...receiver.tracingEnv(service),
        OTEL_BSP_SCHEDULE_DELAY: '600000',
      });
      // A request that is not a read starts a trace (tracingSdk.ts); the ops server answers it 404.
      expect((await fetch(`${relay.url}/traced`, { method: 'POST' })).status).toBe(404);
      const exit = relay.exited();
      await relay.stop();
      relay = undefined;
      expect(await exit).toEqual({ code: 0, signal: null });
      const spans = receiver.spans.filter((span) => span.service === service);
      expect(spans.map((span) => `${span.kind} ${span.name}`)).toContain('server POST');
    });
  }
});
