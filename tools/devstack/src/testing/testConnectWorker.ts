import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ConnectWorker } from '../connectWorker.ts';
import { withKafkaAdmin } from '../kafkaProbe.ts';
import { localDir } from '../paths.ts';
import { freePort } from '../ports.ts';

export type TestConnectWorker = { worker: ConnectWorker; dispose(): Promise<void> };

/**
 * A Kafka Connect worker of its own (its name, group, internal topics and REST port) on `brokers`,
 * usually the run's shared broker, started and ready. `dispose` stops it, deletes its internal
 * topics from the broker and its folder under `.local/connect/` (its log stays in `.local/logs/`).
 * One per test file: a worker takes a few seconds to start and about 400 MB.
 */
export async function startTestConnectWorker(
  label: string,
  brokers: string[],
  options: { exactlyOnceSource?: boolean } = {},
): Promise<TestConnectWorker> {
  const name = `${label}-${process.pid}`;
  const worker = new ConnectWorker({
    brokers,
    name,
    port: await freePort(),
    ...(options.exactlyOnceSource ? { exactlyOnceSource: true } : {}),
    // Beside the services' logs, and kept after the test: Debezium's warnings are read there.
    logFile: join(localDir, 'logs', `connect-${name}.log`),
  });
  rmSync(worker.dir, { recursive: true, force: true });
  await worker.start();
  try {
    await worker.waitUntilReady(120_000);
  } catch (error) {
    await worker.kill();
    throw error;
  }
  return {
    worker,
    dispose: async () => {
      await worker.stop().catch(() => worker.kill());
      await deleteTopics(brokers, Object.values(worker.internalTopics));
      rmSync(worker.dir, { recursive: true, force: true });
    },
  };
}

async function deleteTopics(brokers: string[], topics: string[]): Promise<void> {
  await withKafkaAdmin(brokers, async (admin) => {
    const existing = new Set(await admin.listTopics());
    const ours = topics.filter((topic) => existing.has(topic));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours });
  });
}
