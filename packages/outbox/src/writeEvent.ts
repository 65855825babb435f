import { randomUUID } from 'node:crypto';
import { type Context, context, propagation } from '@opentelemetry/api';
import type { NewEvent } from '@outbox/contracts';
import { schemaFor } from '@outbox/contracts';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';
import { isWellFormedTraceparent } from '@outbox/runtime/traceparent';
import {
  insertOutboxRow,
  insertOutboxRows,
  type OutboxInsert,
  outboxColumnArrays,
  outboxValues,
} from './outboxRow.ts';

export class UnknownEventTypeError extends Error {
  readonly code = 'UNKNOWN_EVENT_TYPE';
}

const insertEvent = `${insertOutboxRow(1)} returning id`;

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
  return isWellFormedTraceparent(traceparent) ? { traceparent } : {};
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
  const [inserted] = await queryRows<{ id: string }>(tx, insertEvent, outboxValues(row));
  if (!inserted) throw new Error('outbox insert returned no row');
  return inserted.id;
}

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
  await queryRows(tx, insertOutboxRows, outboxColumnArrays(rows));
}
