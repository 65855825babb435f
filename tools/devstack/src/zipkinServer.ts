import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { tailFile } from './logTail.ts';
import { copyDependencies } from './maven.ts';
import { localDir, repoRoot } from './paths.ts';
import { isPortInUse } from './ports.ts';
import { pidFromFile, signal, waitForExit } from './processes.ts';
import { requireJava, requireMaven } from './tools.ts';

/** The pom that pins Zipkin's version; its `<zipkin.version>` is the single source of truth. */
export const zipkinPom = resolve(repoRoot, 'tools/devstack/zipkin/pom.xml');
const zipkinLibDir = resolve(localDir, 'zipkin/lib');
const markerName = '.zipkin-version';

export function zipkinVersion(): string {
  const version = /<zipkin\.version>([^<]+)<\/zipkin\.version>/.exec(readFileSync(zipkinPom, 'utf8'))?.[1];
  if (!version) throw new Error(`${zipkinPom} has no <zipkin.version> property; restore it from git.`);
  return version.trim();
}

const jarOf = (version: string) => join(zipkinLibDir, `zipkin-server-${version}-exec.jar`);

/**
 * Makes sure Zipkin's server jar is in .local/zipkin/lib, downloading it with Maven only when it
 * is missing or the pom's version changed (one jar, about 130 MB, once). As for the Kafka jars, the
 * download goes to a staging folder renamed into place, so an interrupted one leaves nothing behind.
 */
export async function ensureZipkinJar(): Promise<string> {
  const version = zipkinVersion();
  if (jarPresent(version)) return jarOf(version);
  requireMaven();
  const staging = `${zipkinLibDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    await copyDependencies(zipkinPom, staging, "Zipkin's server jar");
    if (!existsSync(join(staging, `zipkin-server-${version}-exec.jar`))) {
      throw new Error(`Maven finished but zipkin-server-${version}-exec.jar is not in ${staging}.`);
    }
    writeFileSync(join(staging, markerName), `${version}\n`);
    if (jarPresent(version)) return jarOf(version); // a parallel process was faster
    rmSync(zipkinLibDir, { recursive: true, force: true });
    renameSync(staging, zipkinLibDir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return jarOf(version);
}

function jarPresent(version: string): boolean {
  try {
    return (
      readFileSync(join(zipkinLibDir, markerName), 'utf8').trim() === version && existsSync(jarOf(version))
    );
  } catch {
    return false;
  }
}

/**
 * The heap one span of this system takes in Zipkin's in-memory store, indexes included: 3.5 KB
 * measured by `npm run bench:zipkin-span-weight` (bench/results/zipkin-span-weight/zipkin-span-weight.md), rounded up
 * to 4 KiB. A span is not its JSON (about 0.9 KB): Java strings, maps and the store's indexes.
 */
export const SPAN_HEAP_BYTES = 4096;

/**
 * The share of the heap the stored spans may fill. The rest is Zipkin itself (about 30 MiB after
 * a GC), the requests being decoded under load, and the room G1 needs to collect without a full GC.
 */
const STORE_SHARE = 0.5;

/** The span bound that keeps the store within its share of a `heapMb` heap (65,536 for 512 MiB). */
export function spanBoundFor(heapMb: number): number {
  return Math.floor((heapMb * 2 ** 20 * STORE_SHARE) / SPAN_HEAP_BYTES);
}

export type ZipkinServerOptions = {
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

export type ZipkinExit = { code: number | null; signal: NodeJS.Signals | null; outOfMemory: boolean };

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
    const log = openSync(this.logFile, 'a');
    const logStart = fstatSync(log).size; // this run's lines start here
    let pid: number | undefined;
    try {
      writeSync(log, `\n===== devstack: starting Zipkin at ${new Date().toISOString()} =====\n`);
      const child = spawn('java', this.#javaArgs(jar), {
        cwd: this.dir,
        detached: true, // own process group: Ctrl-C reaches the demo, which then stops Zipkin itself
        stdio: ['ignore', log, log],
        env: { ...process.env, STORAGE_TYPE: 'mem', MEM_MAX_SPANS: String(this.maxSpans) },
      });
      child.unref();
      pid = child.pid;
      this.#exited = new Promise((resolve) => {
        child.once('exit', (code, signal) => {
          resolve({ code, signal, outOfMemory: /OutOfMemoryError/.test(this.#logSince(logStart)) });
        });
      });
    } finally {
      closeSync(log);
    }
    if (pid === undefined) throw new Error('Could not spawn java for Zipkin; is java on PATH?');
    writeFileSync(this.#pidFile, `${pid}\n`);
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

  /** The end (64 KiB at most) of what the log got since `offset`. */
  #logSince(offset: number): string {
    try {
      const text = readFileSync(this.logFile).subarray(offset);
      return text.subarray(Math.max(0, text.length - 65_536)).toString('utf8');
    } catch {
      return '';
    }
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
