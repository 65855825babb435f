// The console's failover buttons for `./dev demo --failover`, and what each failover cost. Just
// before the kill -9 the endpoint is cut (no service can commit any more) and the dead-to-be
// primary is read directly: the orders and outbox rows it holds. After the promotion the promoted
// primary is read for the same rows and the database's topic for their events: a row it lacks was
// lost with the primary; a lost row's event on Kafka was announced (a ghost, which the standby
// wait prevents).

import type {
  DatabaseFailover,
  DatabasePairView,
  FailoverAction,
  FailoverCost,
} from '@outbox/console/demo-controls';
import { topicFor } from '@outbox/contracts';
import type { PostgresPair } from '@outbox/devstack/postgres-pair';
import { AGGREGATE_OF } from '@outbox/devstack/stack-plan';
import { readTopic } from '@outbox/devstack/testing/topic-reader';
import pg from 'pg';
import { DATABASES, type DatabaseName, type DatabasePairs, pairDatabaseUrls } from './databasePairs.ts';
import { say } from './output.ts';
import type { DemoSettings } from './settings.ts';

/** Rows recent enough to matter: the standby lags seconds, and a paused receipt a few minutes. */
const RECENT = "created_at > now() - interval '30 minutes'";

type PairState = {
  paused: boolean;
  killed?: { at: Date; orders: string[]; events: string[] };
  cost?: Omit<FailoverCost, 'ordersUndecided'>;
  busy: boolean;
  lastError?: string;
};

export function databaseFailover(
  settings: DemoSettings,
  pairs: DatabasePairs,
  brokers: string[],
): DatabaseFailover {
  const urls = pairDatabaseUrls(pairs);
  const states = Object.fromEntries(DATABASES.map((db) => [db, { paused: false, busy: false }])) as Record<
    DatabaseName,
    PairState
  >;
  const steps: Record<FailoverAction, (db: DatabaseName) => Promise<void>> = {
    pause: async (db) => {
      await pairs[db].pauseReceipt();
      states[db].paused = true;
    },
    resume: async (db) => {
      await pairs[db].resumeReceipt();
      states[db].paused = false;
    },
    kill: async (db) => {
      const pair = pairs[db];
      pair.endpoint.switchTo(undefined); // from now on nothing commits on it
      states[db].killed = { at: new Date(), ...(await rowsOn(directUrl(pair, db), db)) };
      await pair.killPrimary();
    },
    promote: async (db) => {
      await pairs[db].promote();
      states[db].paused = false;
      const killed = states[db].killed;
      if (killed) states[db].cost = await costOf(db, killed, urls[db], brokers);
    },
    rebuild: (db) => pairs[db].rebuildStandby(),
  };
  return {
    status: () =>
      Promise.all(DATABASES.map((db) => viewOf(db, pairs[db], states[db], settings, urls.orders))),
    act: async (database, action) => {
      const db = database as DatabaseName;
      const state = states[db];
      if (state.busy) throw new Error(`${db}'s databases are still handling the previous action`);
      state.busy = true;
      say('console', `${action} on ${db}'s databases (from the console)`);
      try {
        await steps[action](db);
        delete state.lastError;
      } catch (error) {
        state.lastError = error instanceof Error ? error.message : String(error);
        throw error;
      } finally {
        state.busy = false;
      }
    },
  };
}

/** The primary itself, not the endpoint (cut before the kill). */
function directUrl(pair: PostgresPair, db: DatabaseName): string {
  return `postgresql://postgres@127.0.0.1:${pair.primary.port}/${db}`;
}

async function rowsOn(url: string, db: DatabaseName, only?: { orders: string[]; events: string[] }) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    const filter = (ids: string[] | undefined) => (ids ? 'id = any($1::uuid[])' : RECENT);
    const events = await client.query<{ id: string }>(
      `select id from outbox where ${filter(only?.events)}`,
      only ? [only.events] : [],
    );
    const orders =
      db === 'orders'
        ? await client.query<{ id: string }>(
            `select id from orders where ${filter(only?.orders)}`,
            only ? [only.orders] : [],
          )
        : { rows: [] };
    return { orders: orders.rows.map((r) => r.id), events: events.rows.map((r) => r.id) };
  } finally {
    await client.end().catch(() => {});
  }
}

async function costOf(
  db: DatabaseName,
  killed: NonNullable<PairState['killed']>,
  url: string,
  brokers: string[],
): Promise<Omit<FailoverCost, 'ordersUndecided'>> {
  const kept = await rowsOn(url, db, killed);
  const keptOrders = new Set(kept.orders);
  const keptEvents = new Set(kept.events);
  const lostEvents = new Set(killed.events.filter((id) => !keptEvents.has(id)));
  // Everything the relays published before the kill is on the topic by now.
  const messages = await readTopic(brokers, topicFor(AGGREGATE_OF[db]), { timeoutMs: 60_000 });
  const announced = messages.filter((m) => m.eventId !== undefined && lostEvents.has(m.eventId));
  return {
    killedAt: killed.at.toISOString(),
    ordersLost: killed.orders.filter((id) => !keptOrders.has(id)).length,
    eventsLost: lostEvents.size,
    eventsAnnounced: new Set(announced.map((m) => m.eventId)).size,
  };
}

async function viewOf(
  db: DatabaseName,
  pair: PostgresPair,
  state: PairState,
  settings: DemoSettings,
  ordersUrl: string,
): Promise<DatabasePairView> {
  const alive = pair.endpoint.target !== undefined;
  const standby = pair.standby;
  return {
    database: db,
    replication: pair.replication,
    standbyWait: settings.failover?.standbyWait ?? false,
    primary: { port: pair.primary.port, alive },
    ...(standby ? { standby: { port: standby.port, receiving: !state.paused } } : {}),
    lagBytes: alive && standby ? await lagOf(pair) : null,
    ...(state.cost
      ? { cost: { ...state.cost, ordersUndecided: await undecided(ordersUrl, state.cost.killedAt) } }
      : {}),
    busy: state.busy,
    ...(state.lastError ? { lastError: state.lastError } : {}),
  };
}

/**
 * Bytes of WAL the standby has not flushed. While its receipt is paused the primary no longer
 * lists it, so its own last received position is read instead: the gap a failover would lose.
 */
async function lagOf(pair: PostgresPair): Promise<number | null> {
  const positions = await pair.positions().catch(() => undefined);
  if (!positions) return null;
  const standbyLsn = positions.standbyFlushLsn ?? (pair.standby ? await receivedOn(pair.standby.port) : null);
  if (!standbyLsn) return null;
  return Number(lsn(positions.primaryLsn) - lsn(standbyLsn));
}

async function receivedOn(port: number): Promise<string | null> {
  const client = new pg.Client({
    connectionString: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    connectionTimeoutMillis: 2_000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ lsn: string | null }>(
      'select pg_last_wal_receive_lsn()::text as lsn',
    );
    return rows[0]?.lsn ?? null;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}

/** `16/B374D848` → a byte position. */
function lsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** Orders created before the kill and still PENDING: replies lost with a database leave them so. */
async function undecided(ordersUrl: string, before: string): Promise<number | null> {
  const client = new pg.Client({ connectionString: ordersUrl, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from orders where status = 'PENDING' and created_at < $1::timestamptz`,
      [before],
    );
    return Number(rows[0]?.n ?? 0);
  } catch {
    return null; // the orders primary is down
  } finally {
    await client.end().catch(() => {});
  }
}
