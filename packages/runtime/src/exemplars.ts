import { TraceFlags, trace } from '@opentelemetry/api';
import type { LabelValues } from 'prom-client';

// Links from a latency graph to the trace of one of its observations: each histogram bucket keeps
// its latest observation's trace id as an OpenMetrics exemplar (`trace_id`). Prometheus stores them
// (--enable-feature=exemplar-storage) and Grafana draws them as dots that open the trace in Jaeger
// (infra/grafana/provisioning/datasources). Exemplars cost one label set per bucket, not a
// series per trace, so cardinality stays where it was.

/** The exemplar label that carries the trace id; Grafana's datasource links on this name. */
export const TRACE_ID_LABEL = 'trace_id';

// Typed as any label set: prom-client types an exemplar's labels like the metric's own labels.
type Exemplar = LabelValues<string>;

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-([\da-f]{2})$/;
const INVALID_TRACE_ID = '0'.repeat(32);

const sampled = (flags: number) => (flags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;

/**
 * The exemplar of an event: the trace id of the W3C traceparent it carries (stored in the outbox row
 * by the transaction that wrote it). Empty when the event was written without tracing, or in a
 * trace that was sampled out (docs/tracing.md, "Sampling"): no backend has that trace to open.
 */
export function exemplarOf(traceparent: string | undefined): Exemplar {
  const [, traceId, flags] = (traceparent && TRACEPARENT.exec(traceparent)) || [];
  return traceId && flags && traceId !== INVALID_TRACE_ID && sampled(Number.parseInt(flags, 16))
    ? { [TRACE_ID_LABEL]: traceId }
    : {};
}

/** The exemplar of the span active here (e.g. the HTTP request's server span), if it is recorded. */
export function activeSpanExemplar(): Exemplar {
  const context = trace.getActiveSpan()?.spanContext();
  return context && trace.isSpanContextValid(context) && sampled(context.traceFlags)
    ? { [TRACE_ID_LABEL]: context.traceId }
    : {};
}
