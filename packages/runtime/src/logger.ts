import { trace } from '@opentelemetry/api';
import { type DestinationStream, type Logger, pino } from 'pino';
import { loggedError } from './errors.ts';

export type { Logger };

/**
 * Structured JSON logs (one line per event) with the service name on every line, and the trace
 * and span ids of the active span when there is one, so a log line leads to its trace. An error
 * logged as `err` (or `error`) is reduced to what says what failed and where (errors.ts).
 */
export function createLogger(service: string, level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      name: service,
      level,
      base: { service },
      serializers: { err: loggedError, error: loggedError },
      mixin() {
        const context = trace.getActiveSpan()?.spanContext();
        return context ? { trace_id: context.traceId, span_id: context.spanId } : {};
      },
    },
    destination,
  );
}
