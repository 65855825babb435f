import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { KafkaBroker } from '@outbox/devstack/kafka-broker';
import { freePort } from '@outbox/devstack/ports';
import { startTcpProxy, type TcpProxy } from '../tcpProxy.ts';

const localDir = join(import.meta.dirname, '../../../../.local');

export type OwnBroker = { broker: KafkaBroker; proxy: TcpProxy | undefined; dispose(): Promise<void> };

/**
 * A broker of the scenario's own (a scenario that kills the broker must not kill everyone's),
 * with a fresh data dir under `.local/kafka/`. With `latencyMs`, clients reach it only through a
 * latency proxy: the broker advertises the proxy's port, so the clients' later connections (to
 * the advertised listener, not the bootstrap address) go through it too.
 */
export async function startOwnBroker(
  label: string,
  options: { latencyMs?: number } = {},
): Promise<OwnBroker> {
  const dataDir = join(localDir, 'kafka', `chaos-${label}-${process.pid}`);
  rmSync(dataDir, { recursive: true, force: true });
  const port = await freePort();
  let proxy: TcpProxy | undefined;
  if (options.latencyMs !== undefined) {
    proxy = await startTcpProxy({
      listenPort: await freePort(),
      targetPort: port,
      latencyMs: options.latencyMs,
    });
  }
  const broker = new KafkaBroker({
    port,
    controllerPort: await freePort(),
    ...(proxy ? { advertisedPort: proxy.port } : {}),
    dataDir,
    heapMb: 512,
  });
  try {
    await broker.start();
    await broker.waitUntilReady(120_000);
  } catch (err) {
    await broker.kill();
    await proxy?.close();
    throw err;
  }
  return {
    broker,
    proxy,
    dispose: async () => {
      await broker.stop();
      await proxy?.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
