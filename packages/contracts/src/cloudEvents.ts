import type { EventEnvelope } from './envelope.ts';
import { EVENT_HEADERS } from './eventHeaders.ts';

/**
 * The record an event becomes, and the parts of a received record it is read from, as any Kafka
 * client has them. Declared here so the contracts depend on no client (the client is behind
 * packages/runtime/src/kafka); a received value or header is a string or a Buffer of UTF-8 text.
 */
export type KafkaRecord = { key: string; value: string; headers: Record<string, string> };
type Text = string | { toString(): string };
export type KafkaHeaders = { [name: string]: Text | Text[] | undefined };

/**
 * CloudEvents 1.0 Kafka protocol binding, binary content mode: attributes travel as headers, the
 * data is the message value, and the partition key is the aggregate id. Which header carries which
 * attribute is EVENT_HEADERS (eventHeaders.ts), the table the CDC relay's connector reads too.
 *
 * The trace context of the transaction that wrote the event goes out twice, on purpose:
 * - as `ce_traceparent`/`ce_tracestate`, the CloudEvents distributed-tracing extension: the trace
 *   in which the event was *created*, which a CloudEvents SDK surfaces as `event.traceparent`;
 * - as plain W3C `traceparent`/`tracestate`, where OpenTelemetry propagators and Kafka
 *   instrumentations look. The spec lets a hop replace these (e.g. with the relay's send span);
 *   the `ce_` pair keeps the creation trace whatever happens to them.
 */
export function toKafkaMessage(event: EventEnvelope): KafkaRecord {
  const headers: Record<string, string> = {};
  for (const { attribute, headers: names, optional } of EVENT_HEADERS) {
    const value = event[attribute];
    if (optional && !value) continue;
    for (const name of names) headers[name] = String(value);
  }
  return { key: event.subject, value: JSON.stringify(event.data), headers };
}

/** Why a message could not be read as an event; becomes the dead-letter reason. */
export class MalformedEventError extends Error {
  readonly code = 'MALFORMED_EVENT';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function fromKafkaMessage(message: { headers?: KafkaHeaders; value: Text | null }): EventEnvelope {
  const header = (name: string): string | undefined => {
    const value = message.headers?.[name];
    const first = Array.isArray(value) ? value[0] : value;
    // A header without a value (Kafka allows it; the CDC relay sends one for an event stored
    // without a trace, docs/design.md#polling-or-cdc) reads as an absent header.
    return first === undefined || first === null ? undefined : first.toString();
  };
  const required = (name: string): string => {
    const value = header(name);
    if (!value) throw new MalformedEventError(`missing header ${name}`);
    return value;
  };
  if (required('ce_specversion') !== '1.0') throw new MalformedEventError('unsupported ce_specversion');
  const schemaversion = Number(required('ce_schemaversion'));
  if (!Number.isInteger(schemaversion)) throw new MalformedEventError('ce_schemaversion is not an integer');
  // processed_events.event_id is a uuid: an id that is not one could never be recorded, so the
  // event could never be applied. Refused here, like any other unreadable message.
  if (!UUID.test(required('ce_id'))) throw new MalformedEventError('ce_id is not a UUID');
  if (!message.value) throw new MalformedEventError('empty message value');
  let data: unknown;
  try {
    data = JSON.parse(message.value.toString());
  } catch (err) {
    throw new MalformedEventError('message value is not JSON', { cause: err });
  }
  // The creation trace: the CloudEvents extension first, the W3C header for older producers.
  const traceparent = header('ce_traceparent') ?? header('traceparent');
  const tracestate = header('ce_tracestate') ?? header('tracestate');
  return {
    id: required('ce_id'),
    source: required('ce_source'),
    type: required('ce_type'),
    specversion: '1.0',
    time: required('ce_time'),
    subject: required('ce_subject'),
    aggregatetype: required('ce_aggregatetype'),
    schemaversion,
    datacontenttype: 'application/json',
    data,
    ...(traceparent ? { traceparent } : {}),
    ...(tracestate ? { tracestate } : {}),
  };
}
