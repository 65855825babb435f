// What the apps run on: PostgreSQL, Kafka (one broker or a three-broker cluster), Zipkin for the
// traces, and Prometheus for the console's charts and alerts when it is installed.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { topicFor } from '@outbox/contracts';
import { probePostgres, startEmbeddedPostgres } from '@outbox/devstack/embedded-postgres';
import { KafkaBroker } from '@outbox/devstack/kafka-broker';
import { KafkaCluster } from '@outbox/devstack/kafka-cluster';
import { createTopicsQuietly, waitForCoordinators } from '@outbox/devstack/kafka-probe';
import { isPortInUse } from '@outbox/devstack/ports';
import { demoPrometheusConfig } from '@outbox/devstack/prometheus-config';
import { SERVICES } from '@outbox/devstack/stack-plan';
import { MissingToolError } from '@outbox/devstack/tools';
import { ZipkinServer } from '@outbox/devstack/zipkin-server';
import { deadLetterTopic } from '@outbox/inbox';
import { running } from './lifecycle.ts';
import { print, say } from './output.ts';
import type { DemoSettings } from './settings.ts';

/**
 * PostgreSQL: the configured (or default) server when one answers; otherwise, on this machine, an
 * embedded one on the same port with its data under .local/ (docs/dependencies.md).
 */
export async function choosePostgres(settings: DemoSettings): Promise<string> {
  const { configuredPostgres, embeddedAllowed } = settings;
  const probe = await probePostgres(`${configuredPostgres}/postgres`);
  if (probe.state === 'up') return configuredPostgres;
  const url = new URL(configuredPostgres);
  const local = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (probe.state === 'error') {
    throw new Error(
      `PostgreSQL at ${url.host} refused the demo (${probe.message}). Set DEMO_POSTGRES_URL to a superuser URL, e.g. postgresql://postgres:secret@127.0.0.1:5432`,
    );
  }
  if (!local || !embeddedAllowed) {
    throw new MissingToolError(
      `no PostgreSQL answers at ${url.host}. Start one (Debian: apt-get install -y postgresql) or point DEMO_POSTGRES_URL at one${local ? ', or unset DEMO_EMBEDDED_POSTGRES to let the demo run its own' : ''}.`,
    );
  }
  const port = Number(url.port || 5432);
  print(`No PostgreSQL answers at ${url.host}: starting an embedded one there (data in .local/)…`);
  const embedded = await startEmbeddedPostgres({ port });
  running.embeddedPostgres = embedded;
  print(`PostgreSQL (embedded) is ready at ${embedded.url} (log: ${embedded.logFile})`);
  return embedded.url;
}

/** The demo's broker or cluster, started unless it already runs; `onStarted` runs while it boots. */
export async function startKafka(
  settings: DemoSettings,
  onStarted: () => void,
): Promise<KafkaBroker | KafkaCluster> {
  const { onCluster, kafkaPort } = settings;
  const broker = onCluster
    ? new KafkaCluster({ name: 'cluster' })
    : new KafkaBroker({
        name: kafkaPort === 9092 ? 'demo' : `demo-${kafkaPort}`,
        port: kafkaPort,
        controllerPort: kafkaPort + 1,
      });
  running.broker = broker;
  running.startedBroker = !broker.isRunning();
  if (running.startedBroker) {
    print(
      onCluster
        ? 'Starting a three-broker Kafka cluster on 127.0.0.1:19192, 19292, 19392 (first run resolves the jars with Maven)…'
        : `Starting Kafka on 127.0.0.1:${kafkaPort} (first run resolves the jars with Maven)…`,
    );
    await broker.start();
  }
  onStarted();
  const readyMs = await broker.waitUntilReady(onCluster ? 240_000 : 120_000);
  await waitForCoordinators(broker.brokers, SERVICES);
  // The services' own topics and dead-letter topics, at the services' default partition count (6).
  const topics = ['order', 'reservation', 'payment'].map((aggregate) => topicFor(aggregate));
  await createTopicsQuietly(broker.brokers, [...topics, ...topics.map(deadLetterTopic)], {
    partitions: 6,
    replicationFactor: onCluster ? 3 : 1,
  });
  print(`Kafka is ready at ${broker.brokers.join(',')} (${(readyMs / 1000).toFixed(1)} s)`);
  return broker;
}

/**
 * Zipkin, the trace backend: spawned early, because its JVM boots while the broker does, and
 * awaited (zipkinReady) before the services start, so their first spans have somewhere to go.
 * Without it the demo runs on with tracing off and says why; nothing else depends on it.
 */
export async function startZipkin(settings: DemoSettings): Promise<ZipkinServer | undefined> {
  if (!settings.tracingWanted) return undefined;
  const server = new ZipkinServer({ port: settings.zipkinPort });
  print(`Starting Zipkin on 127.0.0.1:${settings.zipkinPort} (first run downloads its jar with Maven)…`);
  try {
    await server.start();
    return server;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    say('zipkin', `not started, traces are off: ${reason}`);
    return undefined;
  }
}

export async function zipkinReady(server: ZipkinServer | undefined): Promise<ZipkinServer | undefined> {
  if (!server) return undefined;
  try {
    await server.waitUntilReady(90_000);
    return server;
  } catch (error) {
    say('zipkin', `did not start (see ${server.logFile}); traces are off: ${String(error).split('\n')[0]}`);
    await server.stop().catch(() => {});
    return undefined;
  }
}

/**
 * Prometheus scraping the six processes and evaluating infra/prometheus/alerts.yml, if the
 * `prometheus` binary is on PATH (Debian: apt-get install prometheus). At demo speed: every 5 s
 * instead of production's 15 s (tools/devstack/src/prometheusConfig.ts).
 */
export async function startPrometheus(settings: DemoSettings): Promise<ChildProcess | undefined> {
  const { prometheusWanted, prometheusPort } = settings;
  if (!prometheusWanted) return undefined;
  if (await isPortInUse(prometheusPort)) {
    say(
      'prometheus',
      `not started: 127.0.0.1:${prometheusPort} is taken (another Prometheus? PROMETHEUS_PORT=… picks another port)`,
    );
    return undefined;
  }
  const binary = (process.env.PATH ?? '')
    .split(delimiter)
    .map((dir) => join(dir, 'prometheus'))
    .find((path) => existsSync(path));
  if (!binary) {
    say(
      'prometheus',
      'not installed, so the console has no charts or alerts; to add them: sudo apt-get install -y prometheus',
    );
    return undefined;
  }
  return spawnPrometheus(binary, settings);
}

function spawnPrometheus(binary: string, { prometheusPort, ports }: DemoSettings): ChildProcess {
  mkdirSync('.local/logs', { recursive: true });
  mkdirSync('.local/prometheus', { recursive: true });
  const configFile = `.local/prometheus/demo-${prometheusPort}.yml`;
  writeFileSync(configFile, demoPrometheusConfig(ports));
  const log = createWriteStream('.local/logs/demo-prometheus.log', { flags: 'a' });
  const child = spawn(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=.local/prometheus/data-${prometheusPort}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
      // The latency histograms' trace ids (exemplars), as in docker compose.
      '--enable-feature=exemplar-storage',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  child.once('exit', (code, signal) => {
    if (!running.stopping)
      say('prometheus', `exited (${signal ?? code}); see .local/logs/demo-prometheus.log`);
  });
  return child;
}
