import type { Logger } from 'pino';
import { toError } from './errors.ts';

/**
 * Run `stop` once on SIGINT/SIGTERM, then exit. A second signal exits at once, so Ctrl-C twice
 * always gets the user their terminal back. `stop` should finish in-flight work and close pools.
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>, timeoutMs = 10_000): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, 'shutdown timed out; exiting');
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err: toError(err) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
}
