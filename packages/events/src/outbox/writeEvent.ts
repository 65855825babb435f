import { randomUUID } from 'node:crypto';
import { context, propagation } from '@opentelemetry/api';
import { schemaFor } from '../contracts/registry.ts';
import type { NewEvent } from '../envelope.ts';
import { queryRows, type SqlExecutor } from '../sqlExecutor.ts';

export class UnknownEventTypeError extends Error {
  readonly code = 'UNKNOWN_EVENT_TYPE';
}

const insertEvent = `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload, headers)
  values ($1::uuid, $2, $3, $4, $5, $6::int, $7::jsonb, $8::jsonb)
  returning id`;

/**
 * Add an event to the outbox inside the caller's transaction: it commits with the business
 * change or not at all. Call it with the `tx` of `prisma.$transaction(async (tx) => ...)` or with
 * a pg client that has run BEGIN. The data is validated against the event's registered schema
 * first, so nothing malformed ever reaches the outbox; the active trace context (W3C traceparent,
 * tracestate and baggage) is stored with the row so the relay's publish and every consumer stay in
 * the request's trace (docs/tracing.md). Without tracing nothing is stored.
 */
export async function writeEvent(tx: SqlExecutor, source: string, event: NewEvent): Promise<string> {
  const schema = schemaFor(event.type, event.schemaVersion);
  if (!schema) {
    throw new UnknownEventTypeError(`no schema registered for ${event.type} v${event.schemaVersion}`);
  }
  const data = schema.parse(event.data);
  const traceHeaders: Record<string, string> = {};
  propagation.inject(context.active(), traceHeaders);

  const [row] = await queryRows<{ id: string }>(tx, insertEvent, [
    event.id ?? randomUUID(),
    source,
    event.aggregateType,
    event.aggregateId,
    event.type,
    event.schemaVersion,
    JSON.stringify(data),
    JSON.stringify(traceHeaders),
  ]);
  if (!row) throw new Error('outbox insert returned no row');
  return row.id;
}
