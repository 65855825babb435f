import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { KafkaBroker } from '../kafkaBroker.ts';
import { localDir } from '../paths.ts';
import { freePort } from '../ports.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Bootstrap servers of the broker shared by every test file of this run. */
    kafkaBrokers: string[];
  }
}

/**
 * One real Kafka broker for the whole test run, on free ports with a fresh data dir. Test files
 * share it but never a topic or consumer group (each uses its own prefix). Tests that kill a
 * broker start their own instead, so they cannot disturb the others.
 * TEST_KAFKA_BROKERS=host:port reuses a broker that is already running.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.TEST_KAFKA_BROKERS) {
    project.provide('kafkaBrokers', process.env.TEST_KAFKA_BROKERS.split(','));
    return async () => {};
  }
  const dataDir = join(localDir, 'kafka', `test-${process.pid}`);
  rmSync(dataDir, { recursive: true, force: true });
  const broker = new KafkaBroker({ port: await freePort(), controllerPort: await freePort(), dataDir });
  await broker.start();
  await broker.waitUntilReady(120_000);
  project.provide('kafkaBrokers', broker.brokers);
  return async () => {
    await broker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
