import { trace } from '@opentelemetry/api';
import { type Logger, pino } from 'pino';

export type { Logger };

/**
 * Structured JSON logs (one line per event) with the service name on every line, and the trace
 * and span ids of the active span when there is one, so a log line leads to its trace.
 */
export function createLogger(service: string, level: string): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    mixin() {
      const context = trace.getActiveSpan()?.spanContext();
      return context ? { trace_id: context.traceId, span_id: context.spanId } : {};
    },
  });
}
