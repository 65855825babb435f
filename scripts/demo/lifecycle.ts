// Everything the demo started, and stopping it: newest first, on Ctrl-C, on a closed terminal, or
// on any failure, so nothing the demo started is left running.
import type { ChildProcess } from 'node:child_process';
import type { RunningConsole } from '@outbox/console/console';
import type { ConnectWorker } from '@outbox/devstack/connect-worker';
import type { EmbeddedPostgres } from '@outbox/devstack/embedded-postgres';
import type { KafkaBroker } from '@outbox/devstack/kafka-broker';
import type { KafkaCluster } from '@outbox/devstack/kafka-cluster';
import type { PostgresPair } from '@outbox/devstack/postgres-pair';
import type { ServiceProcess } from '@outbox/devstack/service-process';
import type { Supervisor } from '@outbox/devstack/supervisor';
import { MissingToolError } from '@outbox/devstack/tools';
import type { ZipkinServer } from '@outbox/devstack/zipkin-server';
import { print, printError } from './output.ts';
import type { DemoProcess } from './settings.ts';

/** What the demo has started so far; each part is set as it starts. */
type Running = {
  stopping: boolean;
  broker?: KafkaBroker | KafkaCluster;
  /** False when the broker was already running: then it is not the demo's to stop. */
  startedBroker: boolean;
  embeddedPostgres?: EmbeddedPostgres;
  /** `--failover`: a primary and a standby per service database. */
  databasePairs?: PostgresPair[];
  consoleApp?: RunningConsole;
  prometheus?: ChildProcess;
  zipkin?: ZipkinServer;
  zipkinStarting?: Promise<ZipkinServer | undefined>;
  zipkinSupervisor?: Supervisor;
  connect?: ConnectWorker;
  connectSupervisor?: Supervisor;
  services: Partial<Record<DemoProcess, ServiceProcess>>;
};

export const running: Running = { stopping: false, startedBroker: false, services: {} };

/** Stops what this demo started, newest first, then exits. A second Ctrl-C exits at once. */
async function stopAll(exitCode: number): Promise<never> {
  if (running.stopping) process.exit(1);
  running.stopping = true;
  print('\nStopping the console and the services…');
  await running.consoleApp?.close().catch(() => {});
  await stopPrometheus(running.prometheus);
  await Promise.allSettled(Object.values(running.services).map((service) => service.stop()));
  // After the services: their last spans are flushed to it on shutdown.
  running.zipkinSupervisor?.stop();
  running.connectSupervisor?.stop();
  if (running.connect) {
    // Its connectors and replication slots stay: the next run goes on where this one stopped.
    print('Stopping Kafka Connect… (its replication slots stay and hold WAL until the next run)');
    await running.connect
      .stop()
      .catch((error) => printError(`Could not stop Kafka Connect: ${String(error)}`));
  }
  const zipkinToStop = running.zipkin ?? (await running.zipkinStarting);
  await zipkinToStop?.stop().catch((error) => printError(`Could not stop Zipkin: ${String(error)}`));
  if (running.broker && running.startedBroker) {
    print('Stopping Kafka…');
    await running.broker.stop().catch((error) => printError(`Could not stop Kafka: ${String(error)}`));
  }
  if (running.databasePairs?.length) {
    print("Removing the databases' primaries and standbys…");
    await Promise.allSettled(running.databasePairs.map((pair) => pair.remove()));
  }
  if (running.embeddedPostgres) {
    print('Stopping the embedded PostgreSQL…');
    await running.embeddedPostgres.stop();
  }
  process.exit(exitCode);
}

async function stopPrometheus(prometheus: ChildProcess | undefined): Promise<void> {
  if (!prometheus || prometheus.exitCode !== null) return;
  const exited = new Promise((resolve) => prometheus.once('exit', resolve));
  prometheus.kill('SIGTERM');
  await exited;
}

/** Ctrl-C, a closed terminal or an uncaught error: stop everything. */
export function stopAllOnExit(): void {
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  process.on('SIGHUP', () => void stopAll(0)); // the terminal went away
  process.on('uncaughtException', (error) => {
    printError(error instanceof MissingToolError ? error.message : String(error));
    void stopAll(1);
  });
}

/** A missing prerequisite or a start-up failure: one plain line, no stack trace, then stop. */
export async function fail(error: unknown): Promise<never> {
  printError(error instanceof MissingToolError ? `missing: ${error.message}` : String(error));
  return stopAll(1);
}
