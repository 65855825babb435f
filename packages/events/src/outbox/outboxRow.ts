import type { EventEnvelope } from '../envelope.ts';

/** An outbox row as the relay claims it. */
export type OutboxRow = {
  id: string;
  seq: string;
  source: string;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  schema_version: number;
  payload: unknown;
  headers: Record<string, string>;
  attempts: number;
  created_at: Date;
};

export function toEnvelope(row: OutboxRow): EventEnvelope {
  return {
    id: row.id,
    source: row.source,
    type: row.event_type,
    specversion: '1.0',
    time: row.created_at.toISOString(),
    subject: row.aggregate_id,
    aggregatetype: row.aggregate_type,
    schemaversion: row.schema_version,
    datacontenttype: 'application/json',
    data: row.payload,
    ...(row.headers.traceparent ? { traceparent: row.headers.traceparent } : {}),
    ...(row.headers.tracestate ? { tracestate: row.headers.tracestate } : {}),
  };
}
