import { sharedMigrations } from '@outbox/inbox';
import { OUTBOX_SESSION_OPTIONS } from '@outbox/outbox';
import { migrateDatabase } from '@outbox/runtime/migrate';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { queryOnce } from '../postgresClient.ts';
import { createTestDatabase, type TestDatabase } from './testDatabase.ts';

/**
 * A fresh database (see createTestDatabase) with the shared migrations applied: the outbox and
 * processed_events tables, exactly as every service database has them. For tests of the relay,
 * which never migrates a database itself.
 */
export async function createOutboxDatabase(label: string): Promise<TestDatabase> {
  const database = await createTestDatabase(label);
  try {
    await migrateDatabase(database.url, [sharedMigrations]);
  } catch (err) {
    await database.drop();
    throw err;
  }
  return database;
}

/**
 * For a test file of the outbox's statements: its own outbox database, a pool of `max` connections
 * with the relay's session options, and an empty outbox before each test. Read `db` and `pool`
 * inside the tests (they are set once the file's beforeAll has run).
 */
export function useOutboxPool(
  label: string,
  max: number,
): { readonly db: TestDatabase; readonly pool: pg.Pool } {
  const handle = {} as { db: TestDatabase; pool: pg.Pool };
  beforeAll(async () => {
    handle.db = await createOutboxDatabase(label);
    handle.pool = new pg.Pool({ connectionString: handle.db.url, max, options: OUTBOX_SESSION_OPTIONS });
  });
  afterAll(async () => {
    await handle.pool?.end();
    await handle.db?.drop();
  });
  beforeEach(async () => {
    await handle.pool.query('truncate outbox');
  });
  return handle;
}

type InsertEventsOptions = {
  count: number;
  /** Events go round-robin to `<aggregateIdPrefix><n % aggregates>`, n = 0 .. count-1. */
  aggregates: number;
  /** Default `agg-`. */
  aggregateIdPrefix?: string;
  /** Default `order` (topic `<prefix>order.events`). */
  aggregateType?: string;
  /** Default ORDER_CREATED (schema version 1). */
  eventType?: string;
  /** The same payload for every row. Default: a valid ORDER_CREATED v1 with a fresh orderId per row. */
  payload?: unknown;
};

const insertSql = `
  insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
  select gen_random_uuid(), '/orders', $3, $2 || ((n - 1) % $4)::text, $5, 1,
         coalesce($6::jsonb, jsonb_build_object(
           'orderId', gen_random_uuid()::text,
           'customerId', 'customer-' || ((n - 1) % $4)::text,
           'currency', 'EUR',
           'totalCents', '1999',
           'items', jsonb_build_array(jsonb_build_object('sku', 'MS-202', 'quantity', 1, 'unitPriceCents', '1999'))))
    from generate_series(1, $1::int) as n
   order by n`;

/**
 * Insert `count` outbox rows in one statement (one transaction, one NOTIFY), in seq order per
 * aggregate. Returns nothing: read ids and seqs back from the table. Given a client instead of a
 * URL, on that client: a test that commits events at a steady pace then opens no connection per
 * commit (on a busy machine a new connection alone can take hundreds of milliseconds).
 */
export async function insertEvents(
  target: string | pg.ClientBase,
  options: InsertEventsOptions,
): Promise<void> {
  const values = [
    options.count,
    options.aggregateIdPrefix ?? 'agg-',
    options.aggregateType ?? 'order',
    options.aggregates,
    options.eventType ?? 'ORDER_CREATED',
    options.payload === undefined ? null : JSON.stringify(options.payload),
  ];
  if (typeof target === 'string') await queryOnce(target, insertSql, values);
  else await target.query(insertSql, values);
}

type OutboxRowSummary = {
  id: string;
  seq: number;
  aggregate_id: string;
  status: 'pending' | 'in_flight' | 'published' | 'failed';
  attempts: number;
  lease_owner: string | null;
  last_error: string | null;
};

/** Every outbox row (without payloads), in seq order. */
export function outboxRows(url: string): Promise<OutboxRowSummary[]> {
  return queryOnce<OutboxRowSummary>(
    url,
    `select id, seq::int as seq, aggregate_id, status, attempts, lease_owner, last_error
       from outbox order by seq`,
  );
}
