import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { tailFile } from './logTail.ts';
import { ensureJars, pomProperty } from './maven.ts';
import { localDir, repoRoot } from './paths.ts';
import { isPortInUse } from './ports.ts';
import { type JvmExit, pidFromFile, signal, spawnJvm, waitForExit } from './processes.ts';
import { requireJava } from './tools.ts';

/** The pom that pins Zipkin's version; its `<zipkin.version>` is the single source of truth. */
const zipkinPom = resolve(repoRoot, 'tools/devstack/zipkin/pom.xml');
const zipkinLibDir = resolve(localDir, 'zipkin/lib');

export function zipkinVersion(): string {
  return pomProperty(zipkinPom, 'zipkin.version');
}

/**
 * Makes sure Zipkin's server jar is in .local/zipkin/lib, downloading it with Maven only when it
 * is missing or the pom's version changed (one jar, about 130 MB, once), like the Kafka jars.
 */
export async function ensureZipkinJar(): Promise<string> {
  const version = zipkinVersion();
  const jar = `zipkin-server-${version}-exec.jar`;
  await ensureJars({
    pom: zipkinPom,
    libDir: zipkinLibDir,
    jars: [jar],
    marker: '.zipkin-version',
    versions: version,
    what: "Zipkin's server jar",
  });
  return join(zipkinLibDir, jar);
}

/**
 * The heap one span of this system takes in Zipkin's in-memory store, indexes included: 3.5 KB
 * measured by `npm run bench:zipkin-span-weight` (bench/results/zipkin-span-weight/zipkin-span-weight.md), rounded up
 * to 4 KiB. A span is not its JSON (about 0.9 KB): Java strings, maps and the store's indexes.
 */
const SPAN_HEAP_BYTES = 4096;

/**
 * The share of the heap the stored spans may fill. The rest is Zipkin itself (about 30 MiB after
 * a GC), the requests being decoded under load, and the room G1 needs to collect without a full GC.
 */
const STORE_SHARE = 0.5;

/** The span bound that keeps the store within its share of a `heapMb` heap (65,536 for 512 MiB). */
function spanBoundFor(heapMb: number): number {
  return Math.floor((heapMb * 2 ** 20 * STORE_SHARE) / SPAN_HEAP_BYTES);
}

type ZipkinServerOptions = {
  /** Names the folder of the pid file and the log, `.local/zipkin/<name>`. Default 'demo'. */
  name?: string;
  /** HTTP port of the API and the UI on 127.0.0.1. Default 9411, Zipkin's own. */
  port?: number;
  /** Max heap. Default 512 MiB; the span bound follows from it (spanBoundFor). */
  heapMb?: number;
  /**
   * Spans the in-memory store keeps before it drops the oldest traces. Default spanBoundFor(heapMb):
   * at 11 spans an order, the newest ~6,000 orders with the default heap (docs/tracing.md).
   */
  maxSpans?: number;
};

export type ZipkinExit = JvmExit;

/**
 * A real Zipkin server (API, UI and in-memory storage in one jar from Maven Central) for the local
 * demo and the tests, in place of the Jaeger of docker compose. Spans arrive on
 * `POST /api/v2/spans` (OpenTelemetry's Zipkin exporter, `tracingEnv`), traces are read on
 * `GET /api/v2/trace/<id>` and shown at `/zipkin/traces/<id>`.
 *
 * Like the Kafka broker it runs in its own process group with a pid file, so a demo killed
 * without its Ctrl-C handler leaves a pid file the next start uses to stop the old one.
 */
export class ZipkinServer {
  readonly port: number;
  readonly dir: string;
  readonly logFile: string;
  readonly heapMb: number;
  readonly maxSpans: number;
  /** The exit of the JVM this object spawned last (see `exited`). */
  #exited: Promise<ZipkinExit> | undefined;

  constructor(options: ZipkinServerOptions = {}) {
    this.port = options.port ?? 9411;
    this.dir = join(localDir, 'zipkin', options.name ?? 'demo');
    this.logFile = join(this.dir, 'zipkin.log');
    this.heapMb = options.heapMb ?? 512;
    this.maxSpans = options.maxSpans ?? spanBoundFor(this.heapMb);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Where the Zipkin UI shows one trace; `{traceId}` is replaced by the console. */
  get traceUrlTemplate(): string {
    return `${this.url}/zipkin/traces/{traceId}`;
  }

  /**
   * The environment that makes one process of the system export its spans here: OpenTelemetry's
   * own variables, read by the SDK (packages/runtime/src/tracing.ts turns tracing on for them).
   */
  tracingEnv(service: string): Record<string, string> {
    return {
      OTEL_SERVICE_NAME: service,
      OTEL_TRACES_EXPORTER: 'zipkin',
      OTEL_EXPORTER_ZIPKIN_ENDPOINT: `${this.url}/api/v2/spans`,
      // Spans reach Zipkin within half a second, rather than the SDK's default 5 s.
      OTEL_BSP_SCHEDULE_DELAY: '500',
    };
  }

  get pid(): number | undefined {
    return pidFromFile(
      this.#pidFile,
      (commandLine) => commandLine.includes('zipkin-server') && commandLine.includes(`=${this.port}`),
    );
  }

  get #pidFile(): string {
    return join(this.dir, 'zipkin.pid');
  }

  /** Spawns Zipkin (downloading the jar the first time); call waitUntilReady() before using it. */
  async start(): Promise<void> {
    requireJava();
    const stale = this.pid;
    if (stale !== undefined) await this.stop(); // left by a demo that was killed: traces are in memory anyway
    if (await isPortInUse(this.port)) {
      throw new Error(
        `Port ${this.port} on 127.0.0.1 is already in use, so Zipkin cannot listen on it. Find the owner with ` +
          `\`ss -ltnp 'sport = :${this.port}'\` and stop it, or choose another port (ZIPKIN_PORT=...).`,
      );
    }
    const jar = await ensureZipkinJar();
    mkdirSync(this.dir, { recursive: true });
    this.#exited = spawnJvm('Zipkin', this.#javaArgs(jar), {
      cwd: this.dir,
      logFile: this.logFile,
      pidFile: this.#pidFile,
      env: { ...process.env, STORAGE_TYPE: 'mem', MEM_MAX_SPANS: String(this.maxSpans) },
    });
  }

  /**
   * Resolves when the JVM spawned by the last start() exits, however it ends (a stop() too), with
   * whether its log's last lines name an OutOfMemoryError. Undefined before any start().
   */
  exited(): Promise<ZipkinExit> | undefined {
    return this.#exited;
  }

  /** Polls `GET /health` until Zipkin answers; fails fast, with its log, if the JVM exits. */
  async waitUntilReady(timeoutMs = 60_000): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
      if (this.pid === undefined) {
        throw new Error(
          `Zipkin exited while starting. Last lines of ${this.logFile}:\n${tailFile(this.logFile, 30)}`,
        );
      }
      const up = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(1000) }).then(
        (res) => res.ok,
        () => false,
      );
      if (up) return Date.now() - started;
      await sleep(250);
    }
    throw new Error(
      `Zipkin at ${this.url} was not ready after ${timeoutMs} ms. Last lines of ${this.logFile}:\n${tailFile(this.logFile, 30)}`,
    );
  }

  /** SIGTERM, SIGKILL after `timeoutMs`. Resolves true if Zipkin was running. */
  async stop(timeoutMs = 10_000): Promise<boolean> {
    const pid = this.pid;
    rmSync(this.#pidFile, { force: true });
    if (pid === undefined) return false;
    signal(pid, 'SIGTERM');
    if (!(await waitForExit(pid, timeoutMs))) {
      signal(pid, 'SIGKILL');
      await waitForExit(pid, 10_000);
    }
    return true;
  }

  #javaArgs(jar: string): string[] {
    return [
      '-XX:TieredStopAtLevel=1', // C1 only, as for the broker: a faster start on a busy 2-core machine
      '-Xms64m',
      `-Xmx${this.heapMb}m`,
      '-XX:+ExitOnOutOfMemoryError',
      '-Djava.awt.headless=true',
      '-jar',
      jar,
      // Armeria (Zipkin's HTTP server) on loopback only, like every process of the demo.
      `--armeria.ports[0].port=${this.port}`,
      '--armeria.ports[0].ip=127.0.0.1',
      '--armeria.ports[0].protocols[0]=http',
      '--spring.main.banner-mode=off',
    ];
  }
}
