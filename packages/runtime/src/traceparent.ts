import { TraceFlags } from '@opentelemetry/api';

/**
 * The one rule for a well-formed W3C traceparent, for what an outbox row stores (writeEvent) and
 * what a reader of a row or a message trusts (traceHandOff, the console, the exemplars): version
 * 00, lower-case hex, trace id and span id not all zeros, exactly 55 characters
 * (https://www.w3.org/TR/trace-context/#traceparent-header).
 */
const TRACEPARENT = /^00-((?!0{32})[0-9a-f]{32})-((?!0{16})[0-9a-f]{16})-([0-9a-f]{2})$/;

export function isWellFormedTraceparent(traceparent: string | undefined): traceparent is string {
  return traceparent !== undefined && TRACEPARENT.test(traceparent);
}

/**
 * The trace a stored or sent traceparent names, and whether it was sampled: its flags byte is the
 * one record of the head-sampling decision (docs/tracing.md, "Sampling"), so a reader of an outbox
 * row or a message knows whether a trace backend can have the trace at all. Undefined for a
 * missing or malformed traceparent.
 */
export function parseTraceparent(
  traceparent: string | undefined,
): { traceId: string; sampled: boolean } | undefined {
  const [, traceId, , flags] = (traceparent && TRACEPARENT.exec(traceparent)) || [];
  if (!traceId || !flags) return undefined;
  return { traceId, sampled: (Number.parseInt(flags, 16) & TraceFlags.SAMPLED) === TraceFlags.SAMPLED };
}
