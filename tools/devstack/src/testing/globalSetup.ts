import { fixKafkajsIdleTimerLoop } from '@outbox/runtime/kafka/kafkajs';
import type { TestProject } from 'vitest/node';
import { probePostgres, startEmbeddedPostgres } from '../embeddedPostgres.ts';
import { ensureConnectJars } from '../jars.ts';
import { startTestBroker } from './testBroker.ts';
import { testPostgresUrl } from './testDatabase.ts';

/**
 * PostgreSQL for the run: the server at TEST_POSTGRES_URL (default 127.0.0.1:5432) when one answers;
 * when nothing listens there, on this machine, an embedded one on that port, as `./dev demo` does
 * (docs/design.md, The local demo), so every test and tool finds it at the URL it already uses.
 * TEST_EMBEDDED_POSTGRES=off refuses that. Returns how to stop what was started.
 */
async function ensurePostgres(): Promise<() => Promise<void>> {
  const probe = await probePostgres(testPostgresUrl);
  if (probe.state === 'up') return async () => {};
  const url = new URL(testPostgresUrl);
  if (probe.state === 'error')
    throw new Error(`PostgreSQL at ${url.host} refused the tests: ${probe.message}`);
  if (process.env.TEST_EMBEDDED_POSTGRES === 'off' || !['127.0.0.1', 'localhost'].includes(url.hostname)) {
    throw new Error(`no PostgreSQL answers at ${url.host}: start one or set TEST_POSTGRES_URL`);
  }
  const embedded = await startEmbeddedPostgres({ port: Number(url.port || 5432) });
  console.log(
    `no PostgreSQL answered at ${url.host}: the tests run on an embedded one (${embedded.dataDir})`,
  );
  return () => embedded.stop();
}

type Shared = { brokers: string[]; users: number; dispose: () => Promise<void> };
const SHARED = Symbol.for('outbox.testing.globalSetup');
const registry = globalThis as { [SHARED]?: Promise<Shared> };

/** PostgreSQL, the Connect jars and the broker, once per run. */
async function startShared(): Promise<Shared> {
  fixKafkajsIdleTimerLoop(); // the broker's readiness probe uses kafkajs
  const stopPostgres = await ensurePostgres();
  // The Kafka Connect and Debezium jars, resolved here, once, before the test files start: several
  // files start a Connect worker at the same time, and parallel Maven runs on a fresh machine would
  // share one local repository. Cached after the first run (a file check). A failure is only a
  // warning here: the files that need the jars try again and fail with Maven's message.
  await ensureConnectJars().catch((error: Error) =>
    console.warn(`Kafka Connect jars not resolved before the tests: ${error.message}`),
  );
  if (process.env.TEST_KAFKA_BROKERS) {
    return { brokers: process.env.TEST_KAFKA_BROKERS.split(','), users: 0, dispose: stopPostgres };
  }
  const { broker, dispose } = await startTestBroker('test');
  return {
    brokers: broker.brokers,
    users: 0,
    dispose: async () => {
      await dispose();
      await stopPostgres();
    },
  };
}

/**
 * One real Kafka broker for the whole test run. Test files share it but never a topic or a
 * consumer group (each uses its own prefix). Tests that kill a broker start their own instead,
 * so they cannot disturb the others. TEST_KAFKA_BROKERS=host:port reuses a running broker.
 * The run's projects (vitest.config.ts: files that run together, then files that run alone) each
 * call this; they share the one broker, stopped after the last project is done with it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  registry[SHARED] ??= startShared();
  const shared = await registry[SHARED];
  shared.users += 1;
  project.provide('kafkaBrokers', shared.brokers);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete registry[SHARED];
    await shared.dispose();
  };
}
