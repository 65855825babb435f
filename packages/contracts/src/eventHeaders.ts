import type { EventEnvelope } from './envelope.ts';

/**
 * Where each CloudEvents attribute of an event comes from and which Kafka headers carry it: the one
 * table both relay modes read, so that they cannot drift apart (docs/design.md#polling-or-cdc).
 * As with Debezium's outbox router, the outbox table's columns are the configuration contract.
 *
 * - The polling relay reads a row into an envelope (toEnvelope, packages/outbox/src/outboxRow.ts)
 *   and toKafkaMessage (cloudEvents.ts) sends each attribute here as its headers, in this order.
 * - The CDC relay's connector (renderCdcConnectorConfig, packages/outbox/src/cdcConnector.ts) places
 *   each `column` as its headers (the Outbox Event Router's additional placement) and inserts each
 *   `constant`; it finds the columns of the event's id, key, type and topic here too.
 *
 * CloudEvents Kafka protocol binding, binary content mode: attribute `x` travels as header `ce_x`,
 * `datacontenttype` as `content-type`. The data is the message value (the `payload` column), and the
 * key is the subject, so that one aggregate stays on one partition.
 */
export type EventHeader = {
  /** The CloudEvents attribute: a field of the envelope. */
  attribute: Exclude<keyof EventEnvelope, 'data'>;
  /** The Kafka headers it travels in. */
  headers: readonly string[];
  /** The outbox column that holds it, which the connector places as `headers`. */
  column?: string;
  /** The same for every event: the connector inserts it. */
  constant?: string;
  /** Only some events have it: toKafkaMessage leaves its headers out when an event has none. */
  optional?: true;
};

export const EVENT_HEADERS: readonly EventHeader[] = [
  { attribute: 'specversion', headers: ['ce_specversion'], constant: '1.0' },
  { attribute: 'id', headers: ['ce_id'], column: 'id' },
  { attribute: 'source', headers: ['ce_source'], column: 'source' },
  { attribute: 'type', headers: ['ce_type'], column: 'event_type' },
  // toISOString() in the polling relay; Debezium prints the timestamptz(3) column with the same
  // three fraction digits (packages/outbox/migrations/005_outbox_cdc_columns.sql).
  { attribute: 'time', headers: ['ce_time'], column: 'created_at' },
  { attribute: 'subject', headers: ['ce_subject'], column: 'aggregate_id' },
  { attribute: 'aggregatetype', headers: ['ce_aggregatetype'], column: 'aggregate_type' },
  { attribute: 'schemaversion', headers: ['ce_schemaversion'], column: 'schema_version' },
  { attribute: 'datacontenttype', headers: ['content-type'], constant: 'application/json' },
  // The creation trace, twice on purpose (cloudEvents.ts says why). The polling relay reads it from
  // the `headers` column, the connector from `traceparent`, which a trigger keeps in step with it
  // (migration 005). The connector places a NULL too: an untraced event's CDC message has both
  // headers without a value, where the polling relay sends neither.
  {
    attribute: 'traceparent',
    headers: ['ce_traceparent', 'traceparent'],
    column: 'traceparent',
    optional: true,
  },
  // No column: writeEvent stores no tracestate (docs/tracing.md), so neither relay sends one for a
  // row it wrote; the polling relay passes on one that a row's `headers` holds.
  { attribute: 'tracestate', headers: ['ce_tracestate', 'tracestate'], optional: true },
];

/** The column that holds `attribute`, for the connector's settings that name one. */
export function columnOf(attribute: EventHeader['attribute']): string {
  const column = EVENT_HEADERS.find((entry) => entry.attribute === attribute)?.column;
  if (!column) throw new Error(`EVENT_HEADERS has no column for the attribute ${attribute}`);
  return column;
}
