import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { KafkaCluster } from '../kafkaCluster.ts';
import { localDir } from '../paths.ts';
import { freePort } from '../ports.ts';

export type TestCluster = { cluster: KafkaCluster; dispose(): Promise<void> };

/**
 * A real three-node Kafka cluster of the test's own, on free ports, with fresh data dirs under
 * `.local/kafka/`. Starting one takes 20-60 s on a quiet 2-core machine and minutes on a busy one,
 * so a test file starts one and shares it between its tests. `dispose` kills it and deletes its data.
 */
export async function startTestCluster(label: string, readyTimeoutMs = 300_000): Promise<TestCluster> {
  const dataDir = join(localDir, 'kafka', `${label}-${process.pid}`);
  rmSync(dataDir, { recursive: true, force: true });
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
