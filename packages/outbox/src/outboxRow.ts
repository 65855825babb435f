// The outbox row's shape, in one place: every statement that inserts outbox rows (writeEvent,
// writeEvents, and orders' one-statement write in apps/orders/src/orders/createOrder.ts) builds
// its column list, casts and parameters from COLUMNS, so a new column is added here only. The
// relay reads the row back as an OutboxRow and publishes it as its envelope (toEnvelope).

import type { EventEnvelope } from '@outbox/contracts';

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

type Column = { name: string; type: string; of: (row: OutboxInsert) => string | number };

const COLUMNS: readonly Column[] = [
  { name: 'id', type: 'uuid', of: (row) => row.id },
  { name: 'source', type: 'text', of: (row) => row.source },
  { name: 'aggregate_type', type: 'text', of: (row) => row.aggregateType },
  { name: 'aggregate_id', type: 'text', of: (row) => row.aggregateId },
  { name: 'event_type', type: 'text', of: (row) => row.eventType },
  { name: 'schema_version', type: 'int', of: (row) => row.schemaVersion },
  { name: 'payload', type: 'jsonb', of: (row) => row.payload },
  { name: 'headers', type: 'jsonb', of: (row) => row.headers },
];

const columnList = COLUMNS.map((column) => column.name).join(', ');

/**
 * `insert into outbox (...) select $first::uuid, ...`: one row whose values are the parameters
 * from `$first` on, in the order outboxValues gives them. Ends where a caller may go on: with
 * `returning id` (writeEvent), or with `from o` inside a CTE, to write the row only
 * with the business row it belongs to (orders' one-statement write).
 */
export function insertOutboxRow(first: number): string {
  const values = COLUMNS.map((column, k) => `$${first + k}::${column.type}`).join(', ');
  return `insert into outbox (${columnList}) select ${values}`;
}

/** The parameters of insertOutboxRow: `row`'s values in column order. */
export function outboxValues(row: OutboxInsert): (string | number | null)[] {
  return COLUMNS.map((column) => column.of(row));
}

/**
 * Many rows in one statement: one array parameter per column (outboxColumnArrays), rows inserted
 * in the arrays' order (`with ordinality`), so the events of one aggregate get increasing `seq`s
 * in that order.
 */
export const insertOutboxRows = `${insertOutboxRowsFrom(1)}
   order by e.n`;

/**
 * insertOutboxRows with its arrays from `$first` on and its rows named `e`, ending where a caller
 * may go on: with a join that keeps only the rows whose business row was written (orders' one
 * statement for a batch: `join o on o.id::text = e.aggregate_id`), then `order by e.n`.
 */
export function insertOutboxRowsFrom(first: number): string {
  return `
  insert into outbox (${columnList})
  select ${COLUMNS.map((column) => `e.${column.name}`).join(', ')}
    from unnest(${COLUMNS.map((column, k) => `$${first + k}::${column.type}[]`).join(', ')})
         with ordinality as e (${columnList}, n)`;
}

/** The parameters of insertOutboxRows: one array per column. */
export function outboxColumnArrays(rows: readonly OutboxInsert[]): (string | number)[][] {
  return COLUMNS.map((column) => rows.map((row) => column.of(row)));
}

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

export type ClaimedRow = OutboxRow & {
  /** Taken over from a relay whose lease expired: it may have reached the broker already. */
  lease_expired: boolean;
};

/** What an event's envelope is made of: the row's columns, as the relay reads them. */
type EnvelopeColumns = Omit<OutboxRow, 'seq' | 'attempts'>;

/** The envelope the relay publishes for an outbox row (and the naive write modes for their event). */
export function toEnvelope(row: EnvelopeColumns): EventEnvelope {
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

/**
 * The envelope of `event` as if it were its outbox row committed at `createdAt`: the message the
 * relay would publish, for the demo's naive write modes, which send the event without a row.
 */
export function envelopeOf(event: OutboxInsert, createdAt: Date): EventEnvelope {
  return toEnvelope({
    id: event.id,
    source: event.source,
    aggregate_type: event.aggregateType,
    aggregate_id: event.aggregateId,
    event_type: event.eventType,
    schema_version: event.schemaVersion,
    payload: JSON.parse(event.payload),
    headers: JSON.parse(event.headers) as Record<string, string>,
    created_at: createdAt,
  });
}
