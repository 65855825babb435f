import { setTimeout as sleep } from 'node:timers/promises';
import type { ZipkinExit, ZipkinServer } from './zipkinServer.ts';

/**
 * Keeps the demo's Zipkin running: when its JVM exits on its own (an OutOfMemoryError, a kill), it
 * says so and starts it again on the same port, so the services' exporters find it again at their
 * next batch. What it held is gone (the store is in memory); the console says "traces unavailable"
 * while it is down (apps/console/src/traceStore.ts).
 *
 * Each restart waits a pause that doubles (1 s, 2 s, 4 s) while Zipkin keeps dying within
 * `quickMs` of being back, or fails to start; after `maxQuickRestarts` of those the supervisor gives
 * up and says so: a crash loop would only burn the CPU the demo runs on.
 */
export type ZipkinSupervisor = {
  /** Stop watching; call it before stopping Zipkin on purpose. */
  stop(): void;
  /** Resolves when the supervisor stops or gives up. */
  done: Promise<void>;
};

export type SupervisorOptions = {
  /** How the supervisor tells what happened: one line each. */
  report: (message: string) => void;
  maxQuickRestarts?: number;
  /** A run shorter than this counts as a quick failure. */
  quickMs?: number;
  /** The first pause before a restart; it doubles at each quick failure. */
  pauseMs?: number;
};

/** What the supervisor uses of a ZipkinServer. */
type Supervised = Pick<ZipkinServer, 'exited' | 'start' | 'waitUntilReady' | 'url' | 'logFile'>;

export function superviseZipkin(server: Supervised, options: SupervisorOptions): ZipkinSupervisor {
  const { report, maxQuickRestarts = 3, quickMs = 60_000, pauseMs = 1000 } = options;
  let stopped = false;
  let wakeUp: () => void = () => {};
  const stoppedSignal = new Promise<void>((resolve) => {
    wakeUp = resolve;
  });

  async function watch(): Promise<void> {
    let upSince = Date.now();
    let quickRestarts = 0;
    while (!stopped) {
      const exited = server.exited();
      if (!exited) return;
      const exit = await Promise.race([exited, stoppedSignal]);
      if (stopped || !exit) return;
      if (Date.now() - upSince >= quickMs) quickRestarts = 0;
      report(`Zipkin exited (${describeExit(exit)}); the traces it held are lost. Restarting it…`);
      // Until it is back: each attempt after a pause that doubles, a few attempts at most.
      for (;;) {
        if (++quickRestarts > maxQuickRestarts) {
          report(`Zipkin keeps dying; not restarting it again. See ${server.logFile}.`);
          return;
        }
        await Promise.race([sleep(pauseMs * 2 ** (quickRestarts - 1)), stoppedSignal]);
        if (stopped) return;
        try {
          await server.start();
          const readyMs = await server.waitUntilReady(90_000);
          upSince = Date.now();
          report(
            `Zipkin is back at ${server.url} (${(readyMs / 1000).toFixed(1)} s); new traces are recorded again.`,
          );
          break;
        } catch (error) {
          report(`Zipkin did not restart: ${String(error).split('\n')[0]}`);
        }
      }
    }
  }

  const done = watch();
  return {
    stop() {
      stopped = true;
      wakeUp();
    },
    done,
  };
}

function describeExit(exit: ZipkinExit): string {
  if (exit.outOfMemory) return 'OutOfMemoryError';
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exit code ${exit.code}`;
}
