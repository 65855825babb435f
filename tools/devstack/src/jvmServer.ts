import { spawn } from 'node:child_process';
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { tailFile } from './logTail.ts';
import { isPortInUse } from './ports.ts';
import { pidFromFile, terminate } from './processes.ts';
import { requireJava } from './tools.ts';

/** How a JVM ended: a signal (a kill), an exit code, and whether it ran out of memory. */
export type JvmExit = { code: number | null; signal: NodeJS.Signals | null; outOfMemory: boolean };

type JvmStart = { cwd: string; logFile: string; pidFile: string; env?: NodeJS.ProcessEnv | undefined };

/**
 * Spawns `java` detached, in its own process group (it outlives the Node process that started it,
 * and Ctrl-C in a terminal does not reach it), appending its output to `logFile` after a line that
 * says when `what` started, and writes its pid file. Resolves with how it exited, whether the log of
 * this run names an OutOfMemoryError included.
 */
function spawnJvm(what: string, args: string[], { cwd, logFile, pidFile, env }: JvmStart): Promise<JvmExit> {
  const log = openSync(logFile, 'a');
  const logStart = fstatSync(log).size; // this run's lines start here
  let pid: number | undefined;
  let exited: Promise<JvmExit>;
  try {
    writeSync(log, `\n===== devstack: starting ${what} at ${new Date().toISOString()} =====\n`);
    const child = spawn('java', args, {
      cwd,
      detached: true,
      stdio: ['ignore', log, log],
      ...(env ? { env } : {}),
    });
    child.unref();
    pid = child.pid;
    exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        resolve({ code, signal, outOfMemory: /OutOfMemoryError/.test(logSince(logFile, logStart)) });
      });
    });
  } finally {
    closeSync(log); // the child has its own copy of the descriptor
  }
  if (pid === undefined) throw new Error(`Could not spawn java for ${what}; is java on PATH?`);
  writeFileSync(pidFile, `${pid}\n`);
  return exited;
}

/** The end (64 KiB at most) of what a log got since `offset`. */
function logSince(file: string, offset: number): string {
  try {
    const text = readFileSync(file).subarray(offset);
    return text.subarray(Math.max(0, text.length - 65_536)).toString('utf8');
  } catch {
    return '';
  }
}

/**
 * The flags every JVM of the stack starts with. C1 JIT only: the C2 compiler's background work
 * competes for the 2 cores exactly while a server boots (and while the tests run), and a dev server
 * never needs peak throughput. Measured on the broker with both variants alternating, on a loaded
 * 2-core machine: start 2.3-2.7 s vs 2.9-3.0 s, restart after kill -9 5.9-6.3 s vs 6.5-10 s.
 */
export const fastStartJvmOptions = ['-XX:TieredStopAtLevel=1'];

export function jvmHeapOptions(initialMb: number, maxMb: number): string[] {
  return [
    ...fastStartJvmOptions,
    `-Xms${initialMb}m`,
    `-Xmx${maxMb}m`,
    '-XX:+ExitOnOutOfMemoryError',
    '-Djava.awt.headless=true',
  ];
}

/**
 * A server of the stack that runs as a detached JVM (KafkaBroker, ConnectWorker, ZipkinServer): in
 * its own process group, so it outlives the Node process that started it (a CLI starts it and exits),
 * with its state in files under `dir`. Any process that builds the same server (the same folder) finds
 * the JVM again through the pid file, to query, stop or kill it. Each kind says how it is started
 * (`prepare`) and when it is ready (`probe`); the life cycle is the same for all.
 */
export abstract class JvmServer {
  /** Its name in messages: `Kafka`, `Kafka Connect`, `Zipkin`. */
  protected abstract readonly what: string;
  /** Holds the pid file and what the server writes. */
  abstract readonly dir: string;
  /** The JVM's stdout and stderr, appended to across restarts. */
  abstract readonly logFile: string;
  /** Where clients reach it, for messages. */
  protected abstract readonly address: string;
  /** What its command line holds, so a stale pid file's pid is never taken for it (pidFromFile). */
  protected abstract commandLineHolds(): string[];
  /** The ports it listens on, each with how to choose another. */
  protected abstract ports(): [port: number, instead: string][];
  /** Writes its files (the jars downloaded first) and returns the `java` arguments. */
  protected abstract prepare(): Promise<string[]>;
  /** Resolves once it serves clients; throws (with the reason) while it does not yet. */
  protected abstract probe(timeoutMs: number): Promise<void>;
  /** The pid file's name in `dir`. */
  protected abstract readonly pidName: string;
  /** The JVM's environment; the parent's when undefined. */
  protected env: NodeJS.ProcessEnv | undefined;
  /** A JVM found running at start(), left by a process that was killed, is stopped rather than refused. */
  protected replacesRunning = false;
  /** Said when the JVM exits while starting, after its log. */
  protected exitHint = '';
  protected readyTimeoutMs = 60_000;
  protected stopTimeoutMs = 30_000;
  /** The exit of the JVM this object spawned last (see `exited`). */
  #exited: Promise<JvmExit> | undefined;

  protected get pidFile(): string {
    return join(this.dir, this.pidName);
  }

  /** Its pid while it runs; undefined when stopped (a stale pid file does not count). */
  get pid(): number | undefined {
    const holds = this.commandLineHolds();
    return pidFromFile(this.pidFile, (commandLine) => holds.every((part) => commandLine.includes(part)));
  }

  isRunning(): boolean {
    return this.pid !== undefined;
  }

  /**
   * Resolves when the JVM that this object started last exits, however it ends (a stop() too), with
   * whether its log names an OutOfMemoryError; undefined when this object has not started one (one
   * started by another process is not watched).
   */
  exited(): Promise<JvmExit> | undefined {
    return this.#exited;
  }

  /** Spawns the JVM and returns once it runs; call waitUntilReady() before using it. */
  async start(): Promise<void> {
    requireJava();
    const running = this.pid;
    if (running !== undefined && this.replacesRunning) await this.stop();
    else if (running !== undefined) {
      throw new Error(`${this.what} is already running from ${this.dir} (pid ${running}); stop it first.`);
    }
    rmSync(this.pidFile, { force: true }); // stale: the process it names is gone
    for (const [port, instead] of this.ports()) {
      if (await isPortInUse(port)) {
        throw new Error(
          `Port ${port} on 127.0.0.1 is already in use, so ${this.what} cannot listen on it. Find the owner ` +
            `with \`ss -ltnp 'sport = :${port}'\`, stop it, or choose another port (${instead}).`,
        );
      }
    }
    mkdirSync(this.dir, { recursive: true });
    mkdirSync(dirname(this.logFile), { recursive: true });
    const args = await this.prepare();
    this.#exited = spawnJvm(this.what, args, {
      cwd: this.dir,
      logFile: this.logFile,
      pidFile: this.pidFile,
      env: this.env,
    });
  }

  /**
   * Polls `probe` until the server serves clients; resolves with the milliseconds waited. Fails fast,
   * with the end of its log, if the JVM exits meanwhile.
   */
  async waitUntilReady(timeoutMs = this.readyTimeoutMs): Promise<number> {
    const started = Date.now();
    const deadline = started + timeoutMs;
    let lastError: unknown;
    for (;;) {
      if (!this.isRunning()) {
        throw new Error(
          `${this.what} exited while starting. Last lines of ${this.logFile}:\n${tailFile(this.logFile, 40)}${this.exitHint}`,
        );
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      try {
        await this.probe(Math.min(2000, remaining));
        return Date.now() - started;
      } catch (error) {
        lastError = error;
      }
      await sleep(Math.min(200, Math.max(0, deadline - Date.now())));
    }
    throw new Error(
      `${this.what} at ${this.address} was not ready after ${timeoutMs} ms ` +
        `(last error: ${(lastError as Error | undefined)?.message ?? 'none'}). Last lines of ${this.logFile}:\n` +
        tailFile(this.logFile, 40),
    );
  }

  /**
   * Graceful shutdown (SIGTERM: the server closes its files and commits what it must), SIGKILL after
   * `timeoutMs`. Resolves once the pid is really gone, true if it was running.
   */
  async stop(timeoutMs = this.stopTimeoutMs): Promise<boolean> {
    const pid = this.pid;
    if (pid !== undefined) await terminate(pid, this.what, timeoutMs);
    rmSync(this.pidFile, { force: true });
    return pid !== undefined;
  }

  /** `kill -9`: no shutdown hooks, no flush, as in a crash; the next start() recovers from its files. */
  async kill(): Promise<boolean> {
    return this.stop(0);
  }
}

/** A probe of an HTTP server: `url` answers 2xx within `timeoutMs`. */
export async function probeHttp(url: string, timeoutMs: number): Promise<void> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
}
