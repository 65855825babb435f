import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectClasspath, connectLog4jConfig, ensureConnectJars } from './connectJars.ts';
import { tailFile } from './logTail.ts';
import { localDir } from './paths.ts';
import { isPortInUse } from './ports.ts';
import { type JvmExit, pidFromFile, spawnJvm, terminate } from './processes.ts';
import { requireJava } from './tools.ts';

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
  /** Max heap. Default 256: one worker with one Debezium task. */
  heapMb?: number;
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

/** How the worker's JVM ended: a signal (a kill), an exit code, and whether it ran out of memory. */
export type ConnectExit = JvmExit;

/**
 * A real Kafka Connect worker in distributed mode, with Debezium's PostgreSQL connector on its
 * classpath, run from Maven-resolved jars (connectJars.ts) like the broker: the CDC relay of
 * docs/design.md#polling-or-cdc. Distributed, not standalone, because that is how Connect runs in
 * production: connectors are registered through the REST API, and the worker keeps their configs,
 * source offsets and status in three compacted topics on the broker, not in local files.
 *
 * Like KafkaBroker it runs detached in its own process group with a pid file, so any process that
 * constructs a ConnectWorker with the same name can stop or kill it.
 */
export class ConnectWorker {
  readonly brokers: string[];
  readonly name: string;
  readonly port: number;
  readonly heapMb: number;
  readonly dir: string;
  readonly logFile: string;
  readonly exactlyOnceSource: boolean;
  /** The exit of the JVM this object spawned last (see `exited`). */
  #exited: Promise<ConnectExit> | undefined;

  constructor(options: ConnectWorkerOptions) {
    this.brokers = options.brokers;
    this.name = options.name ?? 'demo';
    this.port = options.port ?? 8083;
    this.heapMb = options.heapMb ?? 256;
    this.dir = resolve(join(localDir, 'connect', this.name));
    this.logFile = resolve(options.logFile ?? join(this.dir, 'connect.log'));
    this.exactlyOnceSource = options.exactlyOnceSource ?? false;
  }

  /** The REST API, e.g. `http://127.0.0.1:8083`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The internal topics, named after the worker (see ConnectWorkerOptions.name). */
  get internalTopics(): { configs: string; offsets: string; status: string } {
    const prefix = `_connect-${this.name}`;
    return { configs: `${prefix}-configs`, offsets: `${prefix}-offsets`, status: `${prefix}-status` };
  }

  /** The worker's pid while it runs; undefined when stopped (a stale pid file does not count). */
  get pid(): number | undefined {
    return pidFromFile(
      this.#pidFile,
      (commandLine) =>
        commandLine.includes('ConnectDistributed') && commandLine.includes(this.#propertiesFile),
    );
  }

  isRunning(): boolean {
    return this.pid !== undefined;
  }

  get #pidFile(): string {
    return join(this.dir, 'connect.pid');
  }

  get #propertiesFile(): string {
    return join(this.dir, 'worker.properties');
  }

  /** Spawns the worker (downloading the jars the first time); call waitUntilReady() before using it. */
  async start(): Promise<void> {
    requireJava();
    const running = this.pid;
    if (running !== undefined) {
      throw new Error(`Kafka Connect "${this.name}" is already running (pid ${running}); stop it first.`);
    }
    if (await isPortInUse(this.port)) {
      throw new Error(
        `Port ${this.port} on 127.0.0.1 is already in use, so Kafka Connect cannot serve its REST API there. ` +
          `Find the owner with \`ss -ltnp 'sport = :${this.port}'\`, stop it, or choose another port.`,
      );
    }
    await ensureConnectJars();
    mkdirSync(this.dir, { recursive: true });
    mkdirSync(dirname(this.logFile), { recursive: true });
    rmSync(this.#pidFile, { force: true });
    writeFileSync(this.#propertiesFile, this.renderWorkerProperties());

    this.#exited = spawnJvm('Kafka Connect', this.#javaArgs(), {
      cwd: this.dir,
      logFile: this.logFile,
      pidFile: this.#pidFile,
    });
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

  /**
   * Resolves when the JVM that this object started last exits, however it ends; undefined when this
   * object has not started one (a worker started by another process is not watched).
   */
  exited(): Promise<ConnectExit> | undefined {
    return this.#exited;
  }

  /** Polls the REST API (`GET /`) until it answers; fails fast, with the log, if the JVM exits. */
  async waitUntilReady(timeoutMs = 120_000): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
      if (!this.isRunning()) {
        throw new Error(
          `Kafka Connect exited while starting. Last lines of ${this.logFile}:\n${tailFile(this.logFile, 40)}`,
        );
      }
      const up = await fetch(`${this.url}/`, { signal: AbortSignal.timeout(2000) }).then(
        (res) => res.ok,
        () => false,
      );
      if (up) return Date.now() - started;
      await sleep(200);
    }
    throw new Error(
      `Kafka Connect at ${this.url} was not ready after ${timeoutMs} ms. Last lines of ${this.logFile}:\n` +
        tailFile(this.logFile, 40),
    );
  }

  /** Graceful shutdown (SIGTERM: tasks stop and commit their offsets), SIGKILL after `timeoutMs`. */
  async stop(timeoutMs = 30_000): Promise<boolean> {
    const pid = this.pid;
    rmSync(this.#pidFile, { force: true });
    if (pid !== undefined) await terminate(pid, 'Kafka Connect', timeoutMs);
    return pid !== undefined;
  }

  /** `kill -9`: no offset commit; Debezium re-sends from the last committed position after a restart. */
  async kill(): Promise<boolean> {
    return this.stop(0);
  }

  #javaArgs(): string[] {
    return [
      '-XX:TieredStopAtLevel=1', // C1 only, as for the broker: a faster start on a busy 2-core machine
      '-Xms64m',
      `-Xmx${this.heapMb}m`,
      '-XX:+UseG1GC',
      '-XX:+ExitOnOutOfMemoryError',
      '-Djava.awt.headless=true',
      `-Dlog4j2.configurationFile=${connectLog4jConfig}`,
      '-cp',
      connectClasspath(),
      'org.apache.kafka.connect.cli.ConnectDistributed',
      this.#propertiesFile,
    ];
  }
}
