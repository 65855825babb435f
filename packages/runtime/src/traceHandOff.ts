import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from '@opentelemetry/api';
import type { EventEnvelope } from '@outbox/contracts';
import type { ConsumedMessage, MessageHeaders } from './kafka/ports.ts';
import { tracer } from './tracing.ts';

/**
 * The two Kafka spans of an event's trace, created by hand rather than by a kafkajs
 * instrumentation (docs/tracing.md says why):
 *
 * - the relay's PRODUCER span `publish <topic>`, one per event, whose parent is the context stored
 *   in the event's outbox row, i.e. the span that wrote the event (an HTTP request, or a consumer
 *   handling the previous event). Its own context goes out in the message's W3C headers;
 * - a consumer's CONSUMER span `process <topic>`, one per event (also when events are applied in
 *   chunks), whose parent is that W3C
 *   context, i.e. the publish span. The handler, its transaction and the reply events it writes to
 *   the outbox all run inside it, so the reply events carry the same trace onward.
 *
 * Attributes follow the OpenTelemetry messaging and CloudEvents semantic conventions.
 */

/** An event as the relay publishes it: its envelope, whose traceparent is the stored trace context. */
export type OutgoingEvent = EventEnvelope;

function eventAttributes(event: Pick<EventEnvelope, 'id' | 'type' | 'source' | 'subject'>): Attributes {
  return {
    'messaging.message.id': event.id,
    'messaging.kafka.message.key': event.subject,
    'cloudevents.event_id': event.id,
    'cloudevents.event_type': event.type,
    'cloudevents.event_source': event.source,
    'cloudevents.event_subject': event.subject,
  };
}

/**
 * Start the publish span of one event and write its context into the message's W3C
 * `traceparent` header (the `ce_` headers keep the creation context). End it with `endSpan` once
 * the broker has acknowledged, or refused, the send.
 */
export function startPublishSpan(event: OutgoingEvent, topic: string, headers: MessageHeaders): Span {
  const stored: Record<string, string> = {};
  if (event.traceparent) stored.traceparent = event.traceparent;
  const parent = propagation.extract(ROOT_CONTEXT, stored);
  const span = tracer.startSpan(
    `publish ${topic}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'publish',
        'messaging.destination.name': topic,
        ...eventAttributes(event),
      },
    },
    parent,
  );
  // Without tracing (no propagator registered) inject writes nothing: the W3C headers keep the
  // creation context toKafkaMessage put there.
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(parent, span), carrier);
  Object.assign(headers, carrier);
  return span;
}

/** End a span, as failed when `error` is given. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({
      code: SpanStatusCode.ERROR,
      ...(error instanceof Error ? { message: error.message } : {}),
    });
  }
  span.end();
}

const kafkaHeaders: TextMapGetter<MessageHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    // A header without a value (the CDC relay's traceparent of an untraced event) is no header.
    if (value === undefined || value === null) return undefined;
    return Array.isArray(value) ? value.map((item) => item.toString()) : value.toString();
  },
};

/** The context a message carries in its W3C headers (trace context and baggage). */
export function extractMessageContext(headers: MessageHeaders | undefined): Context {
  return propagation.extract(ROOT_CONTEXT, headers ?? {}, kafkaHeaders);
}

type MessageRead = {
  topic: string;
  partition: number;
  message: Pick<ConsumedMessage, 'headers' | 'key' | 'offset'>;
};

/**
 * Start the CONSUMER span `process <topic>` of one message, whose parent is the message's W3C
 * trace context, and return it with the context to run (or to write reply events) in: what a
 * consumer does for that message belongs to the event's trace. End it with `endSpan`.
 */
export function startProcessSpan(where: MessageRead, groupId: string): { span: Span; context: Context } {
  const { topic, partition, message } = where;
  const header = (name: string) => {
    const value = kafkaHeaders.get(message.headers ?? {}, name);
    return Array.isArray(value) ? value[0] : value;
  };
  const parent = extractMessageContext(message.headers);
  const attributes: Attributes = {
    'messaging.system': 'kafka',
    'messaging.operation.type': 'process',
    'messaging.operation.name': 'process',
    'messaging.destination.name': topic,
    'messaging.destination.partition.id': String(partition),
    'messaging.consumer.group.name': groupId,
    'messaging.kafka.offset': Number(message.offset),
  };
  if (message.key) attributes['messaging.kafka.message.key'] = message.key.toString();
  const id = header('ce_id');
  const type = header('ce_type');
  if (id) {
    attributes['messaging.message.id'] = id;
    attributes['cloudevents.event_id'] = id;
  }
  if (type) attributes['cloudevents.event_type'] = type;
  const span = tracer.startSpan(`process ${topic}`, { kind: SpanKind.CONSUMER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/**
 * Run `work` inside the `process <topic>` span of one message (startProcessSpan): the handler,
 * its queries and the reply events it writes to its outbox belong to the event's trace.
 */
export async function inProcessSpan<T>(
  where: MessageRead,
  groupId: string,
  work: () => Promise<T>,
): Promise<T> {
  const { span, context: spanContext } = startProcessSpan(where, groupId);
  let result: T;
  try {
    result = await context.with(spanContext, work);
  } catch (err) {
    endSpan(span, err);
    throw err;
  }
  span.end();
  return result;
}
