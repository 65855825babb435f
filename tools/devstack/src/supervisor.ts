import { setTimeout as sleep } from 'node:timers/promises';
import type { JvmExit } from './jvmServer.ts';

/** What a supervisor uses of the server it keeps running (a ConnectWorker, a ZipkinServer). */
type Supervised = {
  exited(): Promise<JvmExit> | undefined;
  start(): Promise<void>;
  waitUntilReady(timeoutMs?: number): Promise<number>;
  readonly url: string;
  readonly logFile: string;
};

type SupervisorOptions = {
  /** How the supervisor tells what happened: one line each. */
  report: (message: string) => void;
  /** The first pause before a restart; it doubles at each quick failure. */
  pauseMs?: number;
};

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

/** What the supervisor says of its server: its name, what is lost while it is down, what it does once back. */
type Wording = { name: string; whileDown: string; whenBack: string; readyTimeoutMs: number };

/**
 * Keeps the demo's Zipkin running: when its JVM exits on its own, it starts it again on the same
 * port, so the services' exporters find it again at their next batch. What it held is gone (the
 * store is in memory); the console says "traces unavailable" while it is down
 * (apps/console/src/traceStore.ts).
 */
export function superviseZipkin(server: Supervised, options: SupervisorOptions): Supervisor {
  return superviseJvm(server, ZIPKIN, options);
}

const ZIPKIN: Wording = {
  name: 'Zipkin',
  whileDown: 'the traces it held are lost',
  whenBack: 'new traces are recorded again',
  readyTimeoutMs: 90_000,
};

/**
 * Keeps the demo's Kafka Connect worker running like Zipkin: when its JVM exits on its own, it
 * starts it again on the same port; the connectors resume from their offsets and their slots, and
 * the debezium relays go from `degraded` back to `ok`. An exit the console asks for (its stop and
 * kill -9 buttons) is the lesson, not a failure: `pause` before it, and the worker stays down until
 * the console's start, after which `resume` watches it again.
 */
export function superviseConnect(worker: Supervised, options: SupervisorOptions): Supervisor {
  return superviseJvm(worker, CONNECT, options);
}

const CONNECT: Wording = {
  name: 'Kafka Connect',
  whileDown: 'its connectors publish nothing until it is back',
  whenBack: 'its connectors resume from their slots',
  readyTimeoutMs: 120_000,
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
function superviseJvm(server: Supervised, wording: Wording, options: SupervisorOptions): Supervisor {
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
