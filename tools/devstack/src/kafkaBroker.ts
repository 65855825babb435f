import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { brokerCertificates } from './brokerCertificates.ts';
import { ensureKafkaJars, kafkaClasspath, kafkaLog4jConfig } from './jars.ts';
import { fastStartJvmOptions, JvmServer, jvmHeapOptions } from './jvmServer.ts';
import { probeKafka } from './kafkaProbe.ts';
import {
  type ClusterMembership,
  renderServerProperties,
  type SaslListener,
  scramCredentials,
} from './kafkaServerProperties.ts';
import { localDir } from './paths.ts';
import { run } from './processes.ts';

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
  /** Holds server.properties, the pid file, the log (broker.log) and the partitions. Kept across restarts. */
  dataDir?: string;
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
 * A real single-node Apache Kafka (KRaft) broker run from Maven-resolved jars, no Docker needed: a
 * detached JVM whose state all lives in files under the data dir (JvmServer), so any process
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
 * stop() is SIGTERM (Kafka flushes and closes its logs); kill() is kill -9, after which start()
 * recovers from the same data dir.
 */
export class KafkaBroker extends JvmServer {
  protected readonly what = 'Kafka';
  protected readonly pidName = 'broker.pid';
  protected override readonly exitHint =
    '\nIf a port is taken, pick others (KAFKA_PORT / KAFKA_CONTROLLER_PORT); see docs/local-kafka.md.';
  readonly port: number;
  readonly controllerPort: number;
  readonly advertisedPort: number;
  readonly dataDir: string;
  readonly dir: string;
  readonly logFile: string;
  readonly heapMb: number;
  readonly jvmOptions: string[];
  readonly cluster: ClusterMembership | undefined;
  readonly sasl: SaslListener | undefined;
  readonly tlsPort: number | undefined;
  readonly #clusterId: string | undefined;

  constructor(options: KafkaBrokerOptions = {}) {
    super();
    this.port = options.port ?? 9092;
    this.controllerPort = options.controllerPort ?? 9093;
    this.advertisedPort = options.advertisedPort ?? this.port;
    this.dataDir = resolve(options.dataDir ?? join(localDir, 'kafka', options.name ?? 'demo'));
    this.dir = this.dataDir;
    this.logFile = join(this.dataDir, 'broker.log');
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

  protected get address(): string {
    return this.brokers.join(',');
  }

  /** The PEM of the CA that signed the TLS listener's certificate (with `tlsPort`), for clients. */
  get caFile(): string {
    return join(this.dataDir, 'tls', 'ca.pem');
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

  protected commandLineHolds(): string[] {
    return ['kafka.Kafka', this.#propertiesFile];
  }

  protected ports(): [number, string][] {
    return [
      [this.port, 'KAFKA_PORT=...'],
      [this.controllerPort, 'KAFKA_CONTROLLER_PORT=...'],
      ...(this.sasl ? [[this.sasl.port, 'the SASL listener port'] as [number, string]] : []),
      ...(this.tlsPort ? [[this.tlsPort, 'the TLS listener port'] as [number, string]] : []),
    ];
  }

  /** Polls with a real client until the broker serves metadata. */
  protected probe(timeoutMs: number): Promise<void> {
    return probeKafka(this.brokers, timeoutMs);
  }

  /** Writes server.properties; formats the storage only the first time, so a restart (even after kill -9) keeps all data. */
  protected async prepare(): Promise<string[]> {
    await this.ensureJars();
    mkdirSync(this.#kafkaLogDir, { recursive: true });
    const tls =
      this.tlsPort === undefined
        ? undefined
        : { port: this.tlsPort, ...(await brokerCertificates(join(this.dataDir, 'tls'))) };
    const { port, controllerPort, advertisedPort, cluster, sasl } = this;
    const listeners = { port, controllerPort, advertisedPort, cluster, sasl, tls };
    writeFileSync(this.#propertiesFile, renderServerProperties({ ...listeners, logDir: this.#kafkaLogDir }));
    await this.#formatOnce();
    return [
      ...jvmHeapOptions(256, this.heapMb),
      '-XX:+UseG1GC',
      '-XX:MaxGCPauseMillis=20',
      `-Dlog4j2.configurationFile=${kafkaLog4jConfig}`,
      ...this.jvmOptions,
      '-cp',
      kafkaClasspath,
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
      kafkaClasspath,
      'kafka.tools.StorageTool',
      'format',
      `--cluster-id=${this.#clusterId ?? randomClusterId()}`,
      '-c',
      this.#propertiesFile,
      '--ignore-formatted',
      ...scramCredentials(this.sasl),
    ];
    await run('java', args, { maxBuffer: 64 * 1024 * 1024 }).catch((error) => {
      const output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
      throw new Error(
        `Formatting Kafka storage in ${this.#kafkaLogDir} failed (exit ${error.code}). If the directory is ` +
          `from another Kafka version or cluster, delete ${this.dataDir} and start again.\n${output.slice(-4000)}`,
      );
    });
  }
}

/** 16 random bytes as base64url: the 22-character form Kafka expects. It may not start with '-'. */
export function randomClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
