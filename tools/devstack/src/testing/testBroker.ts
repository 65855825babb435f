import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { KafkaBroker, type KafkaBrokerOptions } from '../kafkaBroker.ts';
import { KafkaCluster } from '../kafkaCluster.ts';
import { localDir } from '../paths.ts';
import { freePort } from '../ports.ts';

export type TestBroker = { broker: KafkaBroker; dispose(): Promise<void> };
export type TestCluster = { cluster: KafkaCluster; dispose(): Promise<void> };

/** A fresh data dir under `.local/kafka/` for a broker or cluster of a test's own. */
function freshDataDir(label: string): string {
  const dataDir = join(localDir, 'kafka', `${label}-${process.pid}`);
  rmSync(dataDir, { recursive: true, force: true });
  return dataDir;
}

/**
 * A real broker of its own, on free ports, with a fresh data dir under `.local/kafka/`.
 * `dispose` stops it and deletes its data.
 */
export async function startTestBroker(
  label: string,
  options: Pick<KafkaBrokerOptions, 'sasl' | 'tlsPort' | 'jvmOptions'> = {},
): Promise<TestBroker> {
  const dataDir = freshDataDir(label);
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

/**
 * A real three-node Kafka cluster of the test's own, on free ports, with fresh data dirs under
 * `.local/kafka/`. Starting one takes 20-60 s on a quiet 2-core machine and minutes on a busy one,
 * so a test file starts one and shares it between its tests. `dispose` kills it and deletes its data.
 */
export async function startTestCluster(label: string, readyTimeoutMs = 300_000): Promise<TestCluster> {
  const dataDir = freshDataDir(label);
  const ports = [];
  for (let i = 0; i < 3; i++) ports.push({ port: await freePort(), controllerPort: await freePort() });
  const cluster = new KafkaCluster({ dataDir, ports });
  const dispose = async () => {
    await Promise.all(cluster.nodes.map((node) => node.kill()));
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await cluster.start();
    await cluster.waitUntilReady(readyTimeoutMs);
  } catch (error) {
    await dispose();
    throw error;
  }
  return { cluster, dispose };
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
