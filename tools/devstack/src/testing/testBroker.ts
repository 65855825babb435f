import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { KafkaBroker, type KafkaBrokerOptions } from '../kafkaBroker.ts';
import { localDir } from '../paths.ts';
import { freePort } from '../ports.ts';

export type TestBroker = { broker: KafkaBroker; dispose(): Promise<void> };

/**
 * A real broker of its own, on free ports, with a fresh data dir under `.local/kafka/`.
 * `dispose` stops it and deletes its data.
 */
export async function startTestBroker(
  label: string,
  options: Pick<KafkaBrokerOptions, 'sasl' | 'tlsPort' | 'jvmOptions'> = {},
): Promise<TestBroker> {
  const dataDir = join(localDir, 'kafka', `${label}-${process.pid}`);
  rmSync(dataDir, { recursive: true, force: true });
  const broker = new KafkaBroker({
    port: await freePort(),
    controllerPort: await freePort(),
    dataDir,
    ...options,
  });
  await broker.start();
  await broker.waitUntilReady(120_000);
  return {
    broker,
    dispose: async () => {
      await broker.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Bootstrap servers of the broker that globalSetup.ts starts for the whole test run. */
    kafkaBrokers: string[];
  }
}

/** The broker shared by every test file of this run (topics and groups stay per file). */
export function sharedKafkaBrokers(): string[] {
  return inject('kafkaBrokers');
}
