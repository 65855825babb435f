import { type Logger, pino } from 'pino';

export type { Logger };

/** Structured JSON logs (one line per event) with the service name on every line. */
export function createLogger(service: string, level: string): Logger {
  return pino({ name: service, level, base: { service } });
}
