import { randomUUID } from 'node:crypto';
import { type Context, context, propagation } from '@opentelemetry/api';
import type { NewEvent } from '@outbox/contracts';
import { schemaFor } from '@outbox/contracts';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';

export class UnknownEventTypeError extends Error {
  readonly code = 'UNKNOWN_EVENT_TYPE';
}

const insertEvent = `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers)
  values ($1::uuid, $2, $3, $4, $5, $6::int, $7::jsonb, $8::jsonb)
  returning id`;

/** An event ready for the outbox's columns: validated, with its id and trace context. */
export type OutboxInsert = {
  id: string;
  source: string;
  aggregateType: string;
  aggregateId: string;
  eventType: string;
  schemaVersion: number;
  /** The validated data, as JSON text for a `::jsonb` parameter. */
  payload: string;
  /** The W3C trace context of the active span, as JSON text for a `::jsonb` parameter. */
  headers: string;
};

/** A W3C traceparent, version 00, with non-zero ids: exactly 55 characters. */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The trace context an outbox row keeps: the `traceparent` of the active span, if well formed, and
 * nothing else. Baggage and tracestate come from the client (up to kilobytes each) and would be
 * stored with every event of every order; the trace needs only the parent span. A malformed or
 * oversized traceparent is dropped, never stored.
 */
function storedTraceContext(traceContext: Context): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(traceContext, carrier);
  const { traceparent } = carrier;
  return traceparent && TRACEPARENT.test(traceparent) ? { traceparent } : {};
}

/**
 * Everything writeEvent does before its INSERT: validate the data against the event's registered
 * schema (nothing malformed ever reaches the outbox) and capture the active span's W3C
 * traceparent (storedTraceContext), so the relay's publish and every consumer stay in the
 * request's trace (docs/tracing.md). Without tracing nothing is stored. For a writer that puts
 * the outbox row in its own business statement (orders' one-statement write path).
 */
export function prepareEvent(
  source: string,
  event: NewEvent,
  traceContext: Context = context.active(),
): OutboxInsert {
  const schema = schemaFor(event.type, event.schemaVersion);
  if (!schema) {
    throw new UnknownEventTypeError(`no schema registered for ${event.type} v${event.schemaVersion}`);
  }
  const data = schema.parse(event.data);
  return {
    id: event.id ?? randomUUID(),
    source,
    aggregateType: event.aggregateType,
    aggregateId: event.aggregateId,
    eventType: event.type,
    schemaVersion: event.schemaVersion,
    payload: JSON.stringify(data),
    headers: JSON.stringify(storedTraceContext(traceContext)),
  };
}

/**
 * Add an event to the outbox inside the caller's transaction: it commits with the business
 * change or not at all. Call it with the `tx` of `prisma.$transaction(async (tx) => ...)` or with
 * a pg client that has run BEGIN. The event is prepared by prepareEvent (validated, trace context
 * captured) first.
 */
export async function writeEvent(tx: SqlExecutor, source: string, event: NewEvent): Promise<string> {
  const row = prepareEvent(source, event);
  const [inserted] = await queryRows<{ id: string }>(tx, insertEvent, [
    row.id,
    row.source,
    row.aggregateType,
    row.aggregateId,
    row.eventType,
    row.schemaVersion,
    row.payload,
    row.headers,
  ]);
  if (!inserted) throw new Error('outbox insert returned no row');
  return inserted.id;
}

// Many events in one statement: one array parameter per column, rows inserted in the arrays'
// order (`with ordinality`), so the events of one aggregate get increasing `seq`s in that order.
const insertEvents = `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers)
  select id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers
    from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::jsonb[], $8::jsonb[])
         with ordinality as e (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers, n)
   order by n`;

/**
 * writeEvent for many events at once, in the caller's transaction: each is prepared (validated,
 * with the trace context given beside it, e.g. the span of the event it answers), then all are
 * inserted with ONE statement. A consumer answering a chunk of events writes its replies this way.
 */
export async function writeEvents(
  tx: SqlExecutor,
  source: string,
  events: { event: NewEvent; traceContext?: Context }[],
): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map(({ event, traceContext }) => prepareEvent(source, event, traceContext));
  await queryRows(tx, insertEvents, [
    rows.map((row) => row.id),
    rows.map((row) => row.source),
    rows.map((row) => row.aggregateType),
    rows.map((row) => row.aggregateId),
    rows.map((row) => row.eventType),
    rows.map((row) => row.schemaVersion),
    rows.map((row) => row.payload),
    rows.map((row) => row.headers),
  ]);
}
