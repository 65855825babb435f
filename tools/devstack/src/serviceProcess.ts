import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { followFile } from './logTail.ts';
import { localDir, repoRoot } from './paths.ts';

export type AppName = 'orders' | 'relay' | 'inventory' | 'billing';

export type ServiceProcess = {
  app: AppName;
  port: number;
  url: string;
  logFile: string;
  readonly pid: number | undefined;
  /** SIGTERM and wait for a clean exit (graceful shutdown). */
  stop(): Promise<void>;
  /** SIGKILL: `kill -9`, no shutdown hooks run. */
  kill(): Promise<void>;
  /** Resolves when the process has exited, with how it ended. */
  exited(): Promise<ExitStatus>;
};

export type ExitStatus = { code: number | null; signal: NodeJS.Signals | null };

type StartServiceOptions = {
  port: number;
  /** Names the log file, `.local/logs/<label>-<name>-<port>.log`. */
  label: string;
  /** The process's name in logs (e.g. `relay-billing`); defaults to the app. */
  name?: string;
  /**
   * Also hand every output line to this function (the demo prints them). It reads the log file as
   * it grows, so a slow reader never holds up the service (see followFile).
   */
  onLine?: (name: string, line: string) => void;
  timeoutMs?: number;
};

/**
 * V8 flags every service runs with (the Dockerfile and the apps' `start` scripts say the same): a
 * 16 MiB young generation instead of the default, which on a host with as much memory as ours grows
 * to 64 MiB per semi-space and stays resident (docs/performance.md, "Resident memory").
 */
const SERVICE_NODE_FLAGS = ['--max-semi-space-size=16'];

/**
 * Start one of the apps as a real process (`node --import @outbox/runtime/tracing-register
 * apps/<app>/src/main.ts`) and wait until its /healthz answers. Used by the demo and by the end-to-end tests, so both run the apps the same way.
 */
export async function startService(
  app: AppName,
  env: Record<string, string>,
  options: StartServiceOptions,
): Promise<ServiceProcess> {
  const logDir = join(localDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const name = options.name ?? app;
  const logFile = join(logDir, `${options.label}-${name}-${options.port}.log`);
  // The process writes its stdout and stderr straight into the file: no pipe through this process,
  // so pino's synchronous writes never wait for us, however busy we are.
  const logFd = openSync(logFile, 'a');
  const startOffset = fstatSync(logFd).size;

  // `--import` starts tracing before the app's imports, so the loader hooks can instrument them;
  // without OTEL_* variables in `env` it does nothing (docs/tracing.md).
  const args = [
    ...SERVICE_NODE_FLAGS,
    '--import',
    '@outbox/runtime/tracing-register',
    join(repoRoot, 'apps', app, 'src', 'main.ts'),
  ];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env, PORT: String(options.port) },
    stdio: ['ignore', logFd, logFd],
    // Its own process group: a Ctrl-C in the terminal reaches only the parent (demo or test),
    // which then stops each service exactly once, with SIGTERM, and waits for it.
    detached: true,
  });
  closeSync(logFd); // the child has its own copy
  const onLine = options.onLine;
  const follower = onLine ? followFile(logFile, startOffset, (line) => onLine(name, line)) : undefined;
  // Resolves once the last lines of the process have been handed to onLine too.
  const exited = new Promise<ExitStatus>((resolve) =>
    child.once('close', (code, signal) => {
      void (follower?.stop() ?? Promise.resolve()).then(() => resolve({ code, signal }));
    }),
  );

  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (true) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited during startup (code ${child.exitCode}); see ${logFile}`);
    }
    const healthy = await fetch(`${url}/healthz`).then(
      (res) => res.ok,
      () => false,
    );
    if (healthy) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`${name} did not become healthy within the deadline; see ${logFile}`);
    }
    await sleep(200);
  }

  const terminate = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await exited;
  };
  return {
    app,
    port: options.port,
    url,
    logFile,
    get pid() {
      return child.exitCode === null && child.signalCode === null ? child.pid : undefined;
    },
    stop: () => terminate('SIGTERM'),
    kill: () => terminate('SIGKILL'),
    exited: () => exited,
  };
}

/**
 * Start several processes at once and wait until every start has settled; throws the first
 * failure. Not Promise.all: when one process fails to start, the others are still starting, and a
 * clean-up that ran at once would miss them (they would outlive the test or the demo).
 */
export async function startTogether<T>(
  names: readonly T[],
  start: (name: T) => Promise<unknown>,
): Promise<void> {
  const failed = (await Promise.allSettled(names.map((name) => start(name)))).find(
    (result) => result.status === 'rejected',
  );
  if (failed) throw failed.reason;
}
