import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { brokerCertificates } from './brokerCertificates.ts';
import { ensureKafkaJars, kafkaClasspath, kafkaLog4jConfig } from './kafkaJars.ts';
import { probeKafka } from './kafkaProbe.ts';
import {
  type ClusterMembership,
  renderServerProperties,
  type SaslListener,
  scramCredentials,
} from './kafkaServerProperties.ts';
import { tailFile } from './logTail.ts';
import { localDir } from './paths.ts';
import { isPortInUse } from './ports.ts';
import { pidFromFile, spawnJvm, terminate } from './processes.ts';
import { requireJava } from './tools.ts';

export type KafkaBrokerOptions = {
  /** Names the default data dir, `.local/kafka/<name>`. Default 'demo'. */
  name?: string;
  /** Client (PLAINTEXT) port on 127.0.0.1. Default 9092. */
  port?: number;
  /** KRaft controller port on 127.0.0.1. Default 9093. */
  controllerPort?: number;
  /**
   * The port clients are told to connect to (the advertised listener), when it differs from
   * `port`: e.g. a latency proxy in front of the broker (tools/chaos). Kafka clients use the
   * bootstrap address only once and then connect to what the broker advertises, so a proxy must
   * be advertised to stay in the path. Default: `port`.
   */
  advertisedPort?: number;
  /** Holds server.properties, the pid file, the log and the partitions. Kept across restarts. */
  dataDir?: string;
  /** Broker stdout/stderr. Default `<dataDir>/broker.log`. */
  logFile?: string;
  /** Max heap. Default 768: a dev broker with a few topics uses far less. */
  heapMb?: number;
  /** Only used when the data dir is formatted for the first time. Default: random. */
  clusterId?: string;
  /** Extra JVM flags, appended after the defaults (e.g. `-Xlog:gc` while investigating). */
  jvmOptions?: string[];
  /** One node of a cluster (kafkaCluster.ts builds these); without it, a broker on its own. */
  cluster?: ClusterMembership;
  /** A second client listener, SASL_PLAINTEXT with SASL/PLAIN users (kafkaServerProperties.ts). */
  sasl?: SaslListener;
  /** A third client listener on this port, SSL, with a certificate signed by a CA of its own (caFile). */
  tlsPort?: number;
};

/**
 * A real single-node Apache Kafka (KRaft) broker run from Maven-resolved jars, no Docker needed.
 *
 * The JVM runs detached in its own process group, so it outlives the Node process that started
 * it (the CLI starts it and exits), and all state lives in files under the data dir: any process
 * constructing a KafkaBroker with the same data dir can query, stop or kill it via the pid file.
 *
 * Measured on the reference machine (Debian 12, 2 cores, OpenJDK 17, Kafka 4.3.1, jars cached),
 * from start() until waitUntilReady() resolves:
 *   - first start of a new data dir (includes `storage format`, ~1.5 s): 3.2-4.2 s
 *   - start of an existing data dir after a graceful stop():              2.3-2.7 s
 *   - start after kill():                                                  5.9-6.3 s
 *     Most of that is the controller waiting out the dead incarnation's broker.session.timeout.ms
 *     (4 s) before it lets the restarted broker register and unfence.
 *   - stop(): 0.3-0.6 s; kill(): 0.1 s.
 */
export class KafkaBroker {
  readonly port: number;
  readonly controllerPort: number;
  readonly advertisedPort: number;
  readonly dataDir: string;
  readonly logFile: string;
  readonly heapMb: number;
  readonly jvmOptions: string[];
  readonly cluster: ClusterMembership | undefined;
  readonly sasl: SaslListener | undefined;
  readonly tlsPort: number | undefined;
  readonly #clusterId: string | undefined;

  constructor(options: KafkaBrokerOptions = {}) {
    this.port = options.port ?? 9092;
    this.controllerPort = options.controllerPort ?? 9093;
    this.advertisedPort = options.advertisedPort ?? this.port;
    this.dataDir = resolve(options.dataDir ?? join(localDir, 'kafka', options.name ?? 'demo'));
    this.logFile = resolve(options.logFile ?? join(this.dataDir, 'broker.log'));
    this.heapMb = options.heapMb ?? 768;
    this.jvmOptions = options.jvmOptions ?? [];
    this.#clusterId = options.clusterId;
    this.cluster = options.cluster;
    this.sasl = options.sasl;
    this.tlsPort = options.tlsPort;
  }

  /** Bootstrap servers for clients, e.g. `['127.0.0.1:9092']` (the advertised port). */
  get brokers(): string[] {
    return [`127.0.0.1:${this.advertisedPort}`];
  }

  /** The broker's pid while it runs; undefined when stopped (a stale pid file does not count). */
  get pid(): number | undefined {
    return pidFromFile(
      this.#pidFile,
      (commandLine) => commandLine.includes('kafka.Kafka') && commandLine.includes(this.#propertiesFile),
    );
  }

  isRunning(): boolean {
    return this.pid !== undefined;
  }

  /** The PEM of the CA that signed the TLS listener's certificate (with `tlsPort`), for clients. */
  get caFile(): string {
    return join(this.dataDir, 'tls', 'ca.pem');
  }

  get #pidFile(): string {
    return join(this.dataDir, 'broker.pid');
  }

  get #propertiesFile(): string {
    return join(this.dataDir, 'server.properties');
  }

  /** Partitions and the KRaft metadata log; a subdirectory so Kafka never sees our own files. */
  get #kafkaLogDir(): string {
    return join(this.dataDir, 'kraft');
  }

  /** Downloads the broker jars once (needs Maven); later calls return immediately. */
  async ensureJars(): Promise<void> {
    await ensureKafkaJars();
  }

  /**
   * Spawns the broker and returns once the JVM runs; call waitUntilReady() before using it.
   * Formats the storage only the first time, so a restart (even after kill -9) keeps all data.
   */
  async start(): Promise<void> {
    requireJava();
    const running = this.pid;
    if (running !== undefined) {
      throw new Error(
        `Kafka is already running from ${this.dataDir} (pid ${running}). Stop it first (\`npm run kafka stop\`).`,
      );
    }
    rmSync(this.#pidFile, { force: true }); // stale: the process it names is gone
    await this.#assertPortsFree();
    await this.ensureJars();

    mkdirSync(this.#kafkaLogDir, { recursive: true });
    const tls =
      this.tlsPort === undefined
        ? undefined
        : { port: this.tlsPort, ...(await brokerCertificates(join(this.dataDir, 'tls'))) };
    writeFileSync(
      this.#propertiesFile,
      renderServerProperties({
        port: this.port,
        controllerPort: this.controllerPort,
        advertisedPort: this.advertisedPort,
        logDir: this.#kafkaLogDir,
        ...(this.cluster ? { cluster: this.cluster } : {}),
        ...(this.sasl ? { sasl: this.sasl } : {}),
        ...(tls ? { tls } : {}),
      }),
    );
    await this.#formatOnce();

    void spawnJvm('Kafka', this.#javaArgs(), {
      cwd: this.dataDir,
      logFile: this.logFile,
      pidFile: this.#pidFile,
    });
  }

  /**
   * Polls with a real client until the broker serves metadata; resolves with the milliseconds
   * waited. Fails fast, with the end of the broker log, if the JVM exits meanwhile.
   */
  async waitUntilReady(timeoutMs = 60_000): Promise<number> {
    const started = Date.now();
    const deadline = started + timeoutMs;
    let lastError: unknown;
    for (;;) {
      if (!this.isRunning()) {
        throw new Error(
          `Kafka exited while starting. Last lines of ${this.logFile}:\n${tailFile(this.logFile, 40)}\n` +
            'If a port is taken, pick others (KAFKA_PORT / KAFKA_CONTROLLER_PORT); see docs/local-kafka.md.',
        );
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      try {
        await probeKafka(this.brokers, Math.min(2000, remaining));
        return Date.now() - started;
      } catch (error) {
        lastError = error;
      }
      await sleep(Math.min(200, Math.max(0, deadline - Date.now())));
    }
    throw new Error(
      `Kafka at ${this.brokers.join(',')} was not ready after ${timeoutMs} ms ` +
        `(last error: ${(lastError as Error | undefined)?.message ?? 'none'}). Last lines of ${this.logFile}:\n` +
        tailFile(this.logFile, 40),
    );
  }

  /**
   * Graceful shutdown (SIGTERM: Kafka flushes and closes its logs), escalating to SIGKILL after
   * `timeoutMs`. Resolves true if a broker was running.
   */
  async stop(timeoutMs = 30_000): Promise<boolean> {
    const pid = this.pid;
    if (pid !== undefined) await terminate(pid, 'Kafka', timeoutMs);
    rmSync(this.#pidFile, { force: true });
    return pid !== undefined;
  }

  /**
   * `kill -9`: no shutdown hooks, no flush. Simulates a crash; the next start() recovers from the
   * same data dir. Resolves once the pid is really gone. Resolves false if nothing was running.
   */
  async kill(): Promise<boolean> {
    return this.stop(0);
  }

  #javaArgs(): string[] {
    return [
      ...fastStartJvmOptions,
      '-Xms256m',
      `-Xmx${this.heapMb}m`,
      '-XX:+UseG1GC',
      '-XX:MaxGCPauseMillis=20',
      '-XX:+ExitOnOutOfMemoryError',
      '-Djava.awt.headless=true',
      `-Dlog4j2.configurationFile=${kafkaLog4jConfig}`,
      ...this.jvmOptions,
      '-cp',
      kafkaClasspath(),
      'kafka.Kafka',
      this.#propertiesFile,
    ];
  }

  /** `kafka-storage format`, only when the data dir has never been formatted. */
  async #formatOnce(): Promise<void> {
    if (existsSync(join(this.#kafkaLogDir, 'meta.properties'))) return;
    const args = [
      ...fastStartJvmOptions,
      `-Dlog4j2.configurationFile=${kafkaLog4jConfig}`,
      '-cp',
      kafkaClasspath(),
      'kafka.tools.StorageTool',
      'format',
      `--cluster-id=${this.#clusterId ?? randomClusterId()}`,
      '-c',
      this.#propertiesFile,
      '--ignore-formatted',
      ...scramCredentials(this.sasl),
    ];
    const { code, output } = await run('java', args);
    if (code !== 0) {
      throw new Error(
        `Formatting Kafka storage in ${this.#kafkaLogDir} failed (exit ${code}). If the directory is ` +
          `from another Kafka version or cluster, delete ${this.dataDir} and start again.\n${output.slice(-4000)}`,
      );
    }
  }

  async #assertPortsFree(): Promise<void> {
    for (const [port, variable] of [
      [this.port, 'KAFKA_PORT'],
      [this.controllerPort, 'KAFKA_CONTROLLER_PORT'],
      ...(this.sasl ? [[this.sasl.port, 'the SASL listener port'] as const] : []),
      ...(this.tlsPort ? [[this.tlsPort, 'the TLS listener port'] as const] : []),
    ] as const) {
      if (await isPortInUse(port)) {
        throw new Error(
          `Port ${port} on 127.0.0.1 is already in use, so Kafka cannot listen on it. Find the owner with ` +
            `\`ss -ltnp 'sport = :${port}'\`, stop it, or choose another port (${variable}=...).`,
        );
      }
    }
  }
}

/**
 * C1 JIT only: the C2 compiler's background work competes for the 2 cores exactly while the
 * broker boots (and while the tests run), and a dev broker never needs peak throughput.
 * Measured with both variants alternating, on a loaded 2-core machine: start 2.3-2.7 s vs 2.9-3.0 s,
 * restart after kill -9 5.9-6.3 s vs 6.5-10 s.
 */
const fastStartJvmOptions = ['-XX:TieredStopAtLevel=1'];

/** 16 random bytes as base64url: the 22-character form Kafka expects. It may not start with '-'. */
function randomClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const append = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    child.once('error', reject);
    child.once('close', (code) => resolvePromise({ code, output }));
  });
}
