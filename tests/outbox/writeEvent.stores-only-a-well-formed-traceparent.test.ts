// What an outbox row keeps of the writer's trace context: the traceparent, well formed, and
// nothing else. A client's baggage and tracestate (kilobytes each, at its choosing) would be
// stored with every event of its orders; a malformed or oversized traceparent is never stored.
import { randomBytes } from 'node:crypto';
import { type Context, propagation, ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { ORDER_CREATED } from '@outbox/contracts';
import { prepareEvent } from '@outbox/outbox';
import { beforeAll, describe, expect, it } from 'vitest';

beforeAll(() => {
  // The propagators a traced service registers (OTEL_PROPAGATORS=tracecontext,baggage).
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
});

/** The headers prepareEvent stores for an event written in `context`. */
function storedHeaders(context: Context): Record<string, string> {
  const event = {
    type: ORDER_CREATED,
    schemaVersion: 1,
    aggregateType: 'order',
    aggregateId: 'b3c1f7a0-3d5e-4c52-9a52-0e3c0c7d9e01',
    data: {
      orderId: 'b3c1f7a0-3d5e-4c52-9a52-0e3c0c7d9e01',
      customerId: 'c-1',
      currency: 'EUR',
      totalCents: '1999',
      items: [{ sku: 'MS-202', quantity: 1, unitPriceCents: '1999' }],
    },
  };
  return JSON.parse(prepareEvent('/orders', event, context).headers) as Record<string, string>;
}

describe('the trace context stored with an event', () => {
  it('is the traceparent alone: no baggage, no tracestate', () => {
    const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    // A request whose client sent all three, 4 KB of baggage among them.
    const fromClient = propagation.extract(ROOT_CONTEXT, {
      traceparent,
      tracestate: 'vendor=opaque',
      baggage: `user.note=${'x'.repeat(4000)}`,
    });
    expect(storedHeaders(fromClient)).toEqual({ traceparent });
  });

  it('is nothing when the traceparent is malformed or oversized', () => {
    for (const traceparent of [
      'not-a-traceparent',
      `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01-${'c'.repeat(5000)}`,
      `00-${'0'.repeat(32)}-${'b'.repeat(16)}-01`,
    ]) {
      expect(storedHeaders(propagation.extract(ROOT_CONTEXT, { traceparent })), traceparent).toEqual({});
    }
    // Nor when a span context that is not W3C-shaped reaches the writer some other way.
    const odd = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: 'z'.repeat(5000),
      spanId: 'b'.repeat(16),
      traceFlags: TraceFlags.SAMPLED,
    });
    expect(storedHeaders(odd)).toEqual({});
  });
});
