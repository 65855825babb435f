import { TraceFlags, trace } from '@opentelemetry/api';
import type { LabelValues } from 'prom-client';
import { parseTraceparent } from './traceparent.ts';

// Links from a latency graph to the trace of one of its observations: each histogram bucket keeps
// its latest observation's trace id as an OpenMetrics exemplar (`trace_id`). Prometheus stores them
// (--enable-feature=exemplar-storage) and Grafana draws them as dots that open the trace in Jaeger
// (infra/grafana/provisioning/datasources). Exemplars cost one label set per bucket, not a
// series per trace, so cardinality stays where it was.

/** The exemplar label that carries the trace id; Grafana's datasource links on this name. */
export const TRACE_ID_LABEL = 'trace_id';

// Typed as any label set: prom-client types an exemplar's labels like the metric's own labels.
type Exemplar = LabelValues<string>;

/**
 * The exemplar of an event: the trace id of the W3C traceparent it carries (stored in the outbox row
 * by the transaction that wrote it). Empty when the event was written without tracing, or in a
 * trace that was sampled out (docs/tracing.md, "Sampling"): no backend has that trace to open.
 */
export function exemplarOf(traceparent: string | undefined): Exemplar {
  const stored = parseTraceparent(traceparent);
  return stored?.sampled ? { [TRACE_ID_LABEL]: stored.traceId } : {};
}

/** The exemplar of the span active here (e.g. the HTTP request's server span), if it is recorded. */
export function activeSpanExemplar(): Exemplar {
  const context = trace.getActiveSpan()?.spanContext();
  return context && trace.isSpanContextValid(context) && context.traceFlags & TraceFlags.SAMPLED
    ? { [TRACE_ID_LABEL]: context.traceId }
    : {};
}
