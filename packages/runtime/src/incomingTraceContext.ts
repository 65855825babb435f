import type { IncomingMessage } from 'node:http';
import {
  isSpanContextValid,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  trace,
} from '@opentelemetry/api';

/**
 * A caller's trace context is a claim, not a fact (docs/tracing.md, "A caller's traceparent"). Taken
 * as the parent of the request's span, its sampled flag decides for the whole order past the rate
 * limit (`-01` traces it, however many a second), and the caller picks the trace id. Unless
 * TRACING_TRUST_INCOMING_TRACEPARENT says a trusted gateway sets it, the request's span starts a
 * trace of its own, sampled by the rate limit like any other, and keeps the caller's context as a
 * span link: the two traces stay findable from each other, and nothing of the caller's is followed.
 */

/** The W3C headers a caller's context travels in. */
const CONTEXT_HEADERS = ['traceparent', 'tracestate', 'baggage'];

const callers = new WeakMap<IncomingMessage, Link>();

/**
 * Take the caller's context out of the request's headers, before the HTTP instrumentation extracts
 * it, and keep it for linkCallerContext. The instrumentation has no hook for its extraction; its
 * ignoreIncomingRequestHook is the one that sees every request before the span is started.
 */
export function setCallerContextAside(request: IncomingMessage): void {
  const caller = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, request.headers));
  for (const name of CONTEXT_HEADERS) delete request.headers[name];
  if (caller && isSpanContextValid(caller)) callers.set(request, { context: caller });
}

/** Link the request's span to the caller's context set aside (a requestHook of the instrumentation). */
export function linkCallerContext(span: Span, request: object): void {
  const link = callers.get(request as IncomingMessage);
  if (link) span.addLink(link);
}
