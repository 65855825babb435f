/** What a measurement runs against: the topic, the bench's database, the services' databases. */
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { createTestDatabase } from '@outbox/devstack/testing/test-database';
import { createPool } from '@outbox/runtime/database';
import { defaultDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import type { Kafka } from 'kafkajs';
import pg from 'pg';

export type Fixture = {
  kafka: Kafka;
  topic: string;
  db: TestDatabase;
  pool: pg.Pool;
  admin: pg.Client;
  brokerPid: number;
  brokers: string[];
  /** The topic is `<prefix>order.events`, as startEventConsumer names it. */
  prefix: string;
  /** The service databases of I and B (when those variants run). */
  inventory?: ServiceDatabase;
  billing?: ServiceDatabase;
  /** A client that reads pg_stat_statements, if the server has it. */
  statements?: pg.Client;
};

/** A database migrated by an app's migrate(), with the app's pool (createPool, default timeouts). */
export type ServiceDatabase = { db: TestDatabase; pool: pg.Pool; admin: pg.Client };

export async function serviceDatabase(
  label: string,
  migrate: (url: string) => Promise<string[]>,
  log: (message: string) => void,
) {
  const db = await createTestDatabase(label);
  try {
    await migrate(db.url);
  } catch (err) {
    await db.drop();
    throw err;
  }
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const pool = createPool(db.url, defaultDatabaseTimeouts, (err) =>
    log(`idle connection failed: ${err.message}`),
  );
  return { db, pool, admin };
}

export async function closeServiceDatabase(service: ServiceDatabase | undefined): Promise<void> {
  if (!service) return;
  await service.pool.end().catch(() => {});
  await service.admin.end().catch(() => {});
  await service.db.drop();
}

/** Empties what a measurement of I or B writes; inventory's stock is raised so no order is short. */
export const resetSql: Record<string, string> = {
  I: 'truncate processed_events, reservation_items, reservations, outbox; update stock set available = 1000000000',
  B: 'truncate processed_events, payments, outbox',
};

/** After I or B: every event recorded once, each with its decision and its one reply in the outbox. */
const checkSql: Record<'I' | 'B', string> = {
  I: `select (select count(*) from processed_events)::int as processed,
             (select count(*) from reservations where status = 'RESERVED')::int as decided,
             (select count(*) from reservations)::int as decisions,
             (select count(*) from outbox)::int as replies`,
  B: `select (select count(*) from processed_events)::int as processed,
             (select count(*) from payments where status = 'AUTHORIZED')::int as decided,
             (select count(*) from payments)::int as decisions,
             (select count(*) from outbox)::int as replies`,
};

/**
 * A measurement that lost or doubled an effect measured nothing: refuse it. After I or B, every
 * event decided once and answered once; with stock raised and no declines, all positively.
 * `exact`: exactly `events` recorded (else at least: a chunk may overshoot the target).
 */
export async function checkServiceEffects(
  admin: pg.Client,
  key: 'I' | 'B',
  events: number,
  label: string,
  exact = false,
): Promise<void> {
  const { rows } = await admin.query<{
    processed: number;
    decided: number;
    decisions: number;
    replies: number;
  }>(checkSql[key]);
  const counts = rows[0];
  if (
    !counts ||
    (exact ? counts.processed !== events : counts.processed < events) ||
    counts.decisions !== counts.processed ||
    counts.decided !== counts.processed ||
    counts.replies !== counts.processed
  )
    throw new Error(`${label}: ${JSON.stringify(counts)}, expected ${events} of each`);
}

/** Counts handled messages and remembers when the first started and the N-th finished. */
export function progress(target: number) {
  let firstAt: number | undefined;
  let lastAt = 0;
  let handled = 0;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  return {
    started() {
      firstAt ??= performance.now();
    },
    handled(n = 1) {
      handled += n;
      if (handled >= target && lastAt === 0) {
        lastAt = performance.now();
        resolveDone();
      }
    },
    done,
    get count() {
      return handled;
    },
    elapsedMs: () => lastAt - (firstAt ?? lastAt),
  };
}
