import { setTimeout as sleep } from 'node:timers/promises';
import type { ConnectExit, ConnectWorker } from './connectWorker.ts';

/**
 * Keeps the demo's Kafka Connect worker running like the demo's other long-lived processes: when
 * its JVM exits on its own (an OutOfMemoryError, a kill from a terminal), it says how it ended and
 * starts it again on the same port; the connectors resume from their offsets and their slots, and
 * the debezium relays go from `degraded` back to `ok`. An exit the console asks for (its stop and
 * kill -9 buttons) is the lesson, not a failure: `pause` before it, and the worker stays down
 * until the console's start, after which `resume` watches it again.
 *
 * Each restart waits a pause that doubles (1 s, 2 s, 4 s) while the worker keeps dying within
 * `quickMs` of being back, or fails to start; after `maxQuickRestarts` of those it gives up and
 * says so, as the Zipkin supervisor does (zipkinSupervisor.ts).
 */
export type ConnectSupervisor = {
  /** The next exit is on purpose: leave the worker down. */
  pause(): void;
  /** Watch the worker again (it was started again on purpose). */
  resume(): void;
  /** Stop watching, for good (the demo is stopping). */
  stop(): void;
};

type Supervised = Pick<ConnectWorker, 'exited' | 'start' | 'waitUntilReady' | 'url' | 'logFile'>;

export function superviseConnect(
  worker: Supervised,
  options: {
    report: (message: string) => void;
    maxQuickRestarts?: number;
    quickMs?: number;
    pauseMs?: number;
  },
): ConnectSupervisor {
  const { report, maxQuickRestarts = 3, quickMs = 60_000, pauseMs = 1000 } = options;
  let paused = false;
  let stopped = false;
  let quickRestarts = 0;
  let upSince = Date.now();
  let watched: Promise<ConnectExit> | undefined;

  const watch = () => {
    const exited = worker.exited();
    if (!exited || exited === watched) return;
    watched = exited;
    void exited.then((exit) => restartAfter(exited, exit));
  };

  const restartAfter = async (which: Promise<ConnectExit>, exit: ConnectExit) => {
    if (stopped || paused || which !== watched) return;
    if (Date.now() - upSince >= quickMs) quickRestarts = 0;
    report(
      `Kafka Connect exited (${describeExit(exit)}); its connectors publish nothing until it is back. Restarting it…`,
    );
    for (;;) {
      if (++quickRestarts > maxQuickRestarts) {
        report(`Kafka Connect keeps dying; not restarting it again. See ${worker.logFile}.`);
        return;
      }
      await sleep(pauseMs * 2 ** (quickRestarts - 1));
      if (stopped || paused) return;
      try {
        await worker.start();
        const readyMs = await worker.waitUntilReady(120_000);
        upSince = Date.now();
        report(
          `Kafka Connect is back at ${worker.url} (${(readyMs / 1000).toFixed(1)} s); its connectors resume from their slots.`,
        );
        watch();
        return;
      } catch (error) {
        report(`Kafka Connect did not restart: ${String(error).split('\n')[0]}`);
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
    },
  };
}

function describeExit(exit: ConnectExit): string {
  if (exit.outOfMemory) return 'OutOfMemoryError';
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exit code ${exit.code}`;
}
