/**
 * The one envelope every event travels in. Its fields are CloudEvents 1.0 attributes, so any
 * CloudEvents SDK can read what the relay publishes (cloudEvents.ts and eventHeaders.ts map them
 * to Kafka headers).
 */
export type EventEnvelope<TData = unknown> = {
  /** Unique per event; consumers deduplicate on it. Same as the outbox row's id. */
  id: string;
  /** The service that produced the event, as a URI reference, e.g. `/orders`. */
  source: string;
  /** Event type, e.g. `ORDER_CREATED`. */
  type: string;
  specversion: '1.0';
  /** When the business change happened (the outbox row's created_at), RFC 3339. */
  time: string;
  /** The aggregate the event is about; also the Kafka key, so one aggregate stays on one partition. */
  subject: string;
  /** Kind of aggregate (`order`); selects the topic. CloudEvents extension attribute. */
  aggregatetype: string;
  /** Version of the `data` schema for this type. CloudEvents extension attribute. */
  schemaversion: number;
  datacontenttype: 'application/json';
  data: TData;
  /** W3C trace context of the transaction that wrote the event (CloudEvents distributed tracing extension). */
  traceparent?: string;
  tracestate?: string;
};

/** What a service hands to the outbox writer; the rest of the envelope is filled in for it. */
export type NewEvent<TData = unknown> = {
  id?: string;
  type: string;
  schemaVersion: number;
  aggregateType: string;
  aggregateId: string;
  data: TData;
};
