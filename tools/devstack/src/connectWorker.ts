import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { connectClasspath, connectLog4jConfig, ensureConnectJars } from './jars.ts';
import { JvmServer, jvmHeapOptions, probeHttp } from './jvmServer.ts';
import { localDir } from './paths.ts';

type ConnectWorkerOptions = {
  /** Bootstrap servers of the broker the worker keeps its state on and produces to. */
  brokers: string[];
  /**
   * Names the worker: its folder `.local/connect/<name>` (pid file, worker.properties, log), its
   * group id and its three internal topics (`_connect-<name>-configs`, `-offsets`, `-status`), so
   * several workers can share one broker without sharing state. Default 'demo'.
   */
  name?: string;
  /** REST API port on 127.0.0.1. Default 8083, Connect's own. */
  port?: number;
  /** The worker's stdout/stderr. Default `.local/connect/<name>/connect.log`. */
  logFile?: string;
  /**
   * Kafka Connect's exactly-once support for source connectors (KIP-618,
   * `exactly.once.source.support=enabled`): each task writes its records and its source offsets in
   * one Kafka transaction, so a restarted worker resumes exactly after what it committed. A
   * connector opts in with `exactly.once.support=required` (packages/outbox/src/cdcConnector.ts). Default off: Connect's
   * at-least-once, the duplicates of a crash absorbed by the consumers' inbox.
   */
  exactlyOnceSource?: boolean;
};

/**
 * A real Kafka Connect worker in distributed mode, with Debezium's PostgreSQL connector on its
 * classpath, run from Maven-resolved jars (jars.ts) like the broker: the CDC relay of
 * docs/design.md#polling-or-cdc. Distributed, not standalone, because that is how Connect runs in
 * production: connectors are registered through the REST API, and the worker keeps their configs,
 * source offsets and status in three compacted topics on the broker, not in local files.
 *
 * A detached JVM with a pid file like the broker (JvmServer), so any process that constructs a
 * ConnectWorker with the same name can stop or kill it. stop() is SIGTERM (tasks stop and commit
 * their offsets); kill() commits nothing, and Debezium re-sends from the last committed position.
 */
export class ConnectWorker extends JvmServer {
  protected readonly what = 'Kafka Connect';
  protected readonly pidName = 'connect.pid';
  protected override readonly readyTimeoutMs = 120_000;
  readonly brokers: string[];
  readonly name: string;
  readonly port: number;
  readonly dir: string;
  readonly logFile: string;
  readonly exactlyOnceSource: boolean;

  constructor(options: ConnectWorkerOptions) {
    super();
    this.brokers = options.brokers;
    this.name = options.name ?? 'demo';
    this.port = options.port ?? 8083;
    this.dir = resolve(join(localDir, 'connect', this.name));
    this.logFile = resolve(options.logFile ?? join(this.dir, 'connect.log'));
    this.exactlyOnceSource = options.exactlyOnceSource ?? false;
  }

  /** The REST API, e.g. `http://127.0.0.1:8083`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  protected get address(): string {
    return this.url;
  }

  /** The internal topics, named after the worker (see ConnectWorkerOptions.name). */
  get internalTopics(): { configs: string; offsets: string; status: string } {
    const prefix = `_connect-${this.name}`;
    return { configs: `${prefix}-configs`, offsets: `${prefix}-offsets`, status: `${prefix}-status` };
  }

  get #propertiesFile(): string {
    return join(this.dir, 'worker.properties');
  }

  protected commandLineHolds(): string[] {
    return ['ConnectDistributed', this.#propertiesFile];
  }

  protected ports(): [number, string][] {
    return [[this.port, "the worker's port"]];
  }

  /** The REST API answers `GET /`. */
  protected probe(timeoutMs: number): Promise<void> {
    return probeHttp(`${this.url}/`, timeoutMs);
  }

  /** Writes worker.properties, downloading the jars the first time. */
  protected async prepare(): Promise<string[]> {
    await ensureConnectJars();
    writeFileSync(this.#propertiesFile, this.renderWorkerProperties());
    return [
      ...jvmHeapOptions(64, 256), // one worker with one Debezium task
      '-XX:+UseG1GC',
      `-Dlog4j2.configurationFile=${connectLog4jConfig}`,
      '-cp',
      connectClasspath,
      'org.apache.kafka.connect.cli.ConnectDistributed',
      this.#propertiesFile,
    ];
  }

  /**
   * The worker's configuration. Internal topics at the brokers' default.replication.factor (-1): 1 on
   * one broker, 3 on the cluster, where the source offsets must outlive a broker as the events do.
   * One partition each: a dev worker runs a handful of connectors.
   */
  renderWorkerProperties(): string {
    const topics = this.internalTopics;
    const lines = [
      `bootstrap.servers=${this.brokers.join(',')}`,
      `group.id=connect-${this.name}`,
      `listeners=http://127.0.0.1:${this.port}`,
      'rest.advertised.host.name=127.0.0.1',
      `rest.advertised.port=${this.port}`,
      `config.storage.topic=${topics.configs}`,
      `offset.storage.topic=${topics.offsets}`,
      `status.storage.topic=${topics.status}`,
      'config.storage.replication.factor=-1',
      'offset.storage.replication.factor=-1',
      'status.storage.replication.factor=-1',
      'offset.storage.partitions=1',
      'status.storage.partitions=1',
      // Source offsets (the WAL position Debezium has published up to) are committed every second
      // instead of every minute: a restarted worker then re-sends at most about a second of events.
      'offset.flush.interval.ms=1000',
      // One worker: when it restarts there is nobody to wait for, so its connectors are assigned
      // again at once instead of after the default 5-minute grace period.
      'scheduled.rebalance.max.delay.ms=0',
      // Every connector sets its own converters (packages/outbox/src/cdcConnector.ts); these are only the defaults.
      'key.converter=org.apache.kafka.connect.storage.StringConverter',
      'value.converter=org.apache.kafka.connect.json.JsonConverter',
      'value.converter.schemas.enable=false',
      // Plugins are on the classpath, not in a plugin.path: scanning it is all discovery needs.
      'plugin.discovery=only_scan',
      // A new worker group may start straight at `enabled` (an existing one goes through `preparing`).
      // Its consumers of the source offsets read committed; the broker needs the transaction log.
      ...(this.exactlyOnceSource ? ['exactly.once.source.support=enabled'] : []),
    ];
    return `${lines.join('\n')}\n`;
  }
}
