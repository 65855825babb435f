import { setTimeout as sleep } from 'node:timers/promises';
import type { JvmExit } from './jvmServer.ts';

/** What a supervisor uses of the server it keeps running (a ConnectWorker, a ZipkinServer). */
export type Supervised = {
  exited(): Promise<JvmExit> | undefined;
  start(): Promise<void>;
  waitUntilReady(timeoutMs?: number): Promise<number>;
  readonly url: string;
  readonly logFile: string;
};

export type SupervisorOptions = {
  /** How the supervisor tells what happened: one line each. */
  report: (message: string) => void;
  /** The first pause before a restart; it doubles at each quick failure. */
  pauseMs?: number;
};

/** What the supervisor says of its server: its name, what is lost while it is down, what it does once back. */
type Wording = { name: string; whileDown: string; whenBack: string; readyTimeoutMs: number };

export type Supervisor = {
  /** The next exit is on purpose: leave the server down. */
  pause(): void;
  /** Watch the server again (it was started again on purpose). */
  resume(): void;
  /** Stop watching, for good; call it before stopping the server on purpose. */
  stop(): void;
  /** Resolves when the supervisor stops or gives up. */
  done: Promise<void>;
};

/** Restarts that fail, or die within QUICK_MS of being back, before the supervisor gives up. */
const MAX_QUICK_RESTARTS = 3;
const QUICK_MS = 60_000;

/**
 * Keeps one of the demo's JVMs running: when it exits on its own (an OutOfMemoryError, a kill from a
 * terminal), it says how it ended and starts it again on the same port. Each restart waits a pause
 * that doubles (1 s, 2 s, 4 s) while the server keeps dying within a minute of being back, or
 * fails to start; after three of those it gives up and says so: a crash loop would only
 * burn the CPU the demo runs on.
 */
export function superviseJvm(server: Supervised, wording: Wording, options: SupervisorOptions): Supervisor {
  const { report, pauseMs = 1000 } = options;
  const { name, whileDown, whenBack, readyTimeoutMs } = wording;
  let paused = false;
  let stopped = false;
  let quickRestarts = 0;
  let upSince = Date.now();
  let watched: Promise<JvmExit> | undefined;
  const stopping = Promise.withResolvers<void>();
  const finished = Promise.withResolvers<void>();

  const watch = () => {
    const exited = server.exited();
    if (!exited || exited === watched) return;
    watched = exited;
    void exited.then((exit) => restartAfter(exited, exit));
  };

  const restartAfter = async (which: Promise<JvmExit>, exit: JvmExit) => {
    if (stopped || paused || which !== watched) return;
    if (Date.now() - upSince >= QUICK_MS) quickRestarts = 0;
    report(`${name} exited (${describeExit(exit)}); ${whileDown}. Restarting it…`);
    for (;;) {
      if (++quickRestarts > MAX_QUICK_RESTARTS) {
        report(`${name} keeps dying; not restarting it again. See ${server.logFile}.`);
        finished.resolve();
        return;
      }
      await Promise.race([sleep(pauseMs * 2 ** (quickRestarts - 1)), stopping.promise]);
      if (stopped || paused) return;
      try {
        await server.start();
        const readyMs = await server.waitUntilReady(readyTimeoutMs);
        upSince = Date.now();
        report(`${name} is back at ${server.url} (${(readyMs / 1000).toFixed(1)} s); ${whenBack}.`);
        watch();
        return;
      } catch (error) {
        report(`${name} did not restart: ${String(error).split('\n')[0]}`);
      }
    }
  };

  watch();
  return {
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      quickRestarts = 0;
      upSince = Date.now();
      watch();
    },
    stop() {
      stopped = true;
      stopping.resolve();
      finished.resolve();
    },
    done: finished.promise,
  };
}

function describeExit(exit: JvmExit): string {
  if (exit.outOfMemory) return 'OutOfMemoryError';
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exit code ${exit.code}`;
}
