// PostgreSQL broken under load: the server restarted, and a database's primary killed and its
// standby promoted.
import type { Replication } from '@outbox/devstack/postgres-pair';
import type { Scenario, ScenarioContext } from '../scenario.ts';
import type { DatabaseName } from '../stack.ts';

export const postgresRestart: Scenario = {
  name: 'postgres-restart',
  breaks:
    'PostgreSQL (a private server) restarted twice with `pg_ctl restart -m immediate` while everything runs',
  expectation:
    'Every connection drops at once. The API answers 503 and the client retries with the same Idempotency-Key; ' +
    'consumers retry the event in hand (their transaction rolled back); relays back off and reconnect.',
  needs: { privatePostgres: true },
  inject: async (context) => {
    const { postgres } = context;
    for (const ms of [4_000, 10_000]) {
      await at(context, ms);
      context.fault('pg_ctl restart -m immediate');
      await postgres.restartImmediately();
      context.restored('PostgreSQL accepting connections');
    }
  },
};
type Variant = {
  replication: Replication;
  /**
   * DATABASE_WAIT_FOR_STANDBY for orders and its relay: the relay publishes, and the orders
   * consumer commits its offsets, only what the standby holds (runtime's standbyWait.ts).
   */
  waitForStandby: boolean;
  /** The databases failed over, all at once (default the orders database). */
  databases?: DatabaseName[];
};

const LOST_WINDOW = '2 s';

/**
 * A database's primary dies (kill -9 of every process of it) under load and its standby is
 * promoted; the endpoint the services connect through moves to it, as a virtual IP would, and a
 * new standby is built from the promoted primary. With several databases, each has its pair and
 * all fail over at once. With async replication the standbys stop receiving WAL at least 2 s before
 * the kill, so the failover certainly loses those commits.
 */
function failover(name: string, { replication, waitForStandby, databases = ['orders'] }: Variant): Scenario {
  const wait: Record<string, string> = waitForStandby ? { DATABASE_WAIT_FOR_STANDBY: 'standby' } : {};
  const which =
    databases.length === 1
      ? `the ${databases[0]} database's primary`
      : `the primaries of ${databases.join(', ')}`;
  const env = Object.fromEntries(
    databases.flatMap((db) => [
      [db, wait],
      [`relay-${db}`, wait],
    ]),
  );
  return {
    name,
    breaks:
      `${which} killed with kill -9 under load and promoted standbys take over (${replication} replication` +
      (replication === 'async'
        ? `; the standby stopped receiving WAL at least ${LOST_WINDOW} before, so those commits are lost)`
        : ')') +
      (waitForStandby
        ? '; their services and relays wait for the standby'
        : '; nothing waits for the standby'),
    expectation:
      replication === 'sync'
        ? 'Nothing committed is lost; no event without its row; the API answers 503 until the promotion, then ' +
          'carries on.'
        : waitForStandby
          ? 'Orders acknowledged after the standby stopped receiving are gone with the primary (counted); none ' +
            'was announced: no event on Kafka without its row on the promoted primary, no reservation or payment ' +
            'for an order that does not exist, and no reply that orders applied in the lost commits was forgotten ' +
            '(its offset was not committed, so it is applied again on the promoted primary).'
          : 'The checker must catch it: events on Kafka for orders the failover lost (ghosts), with reservations ' +
            'and payments for them, and replies applied in the lost commits whose offsets were committed.',
    needs: { postgresPair: replication, failoverDatabases: databases },
    stack: { env },
    load: { rate: 50, durationMs: 20_000 },
    quiescenceTimeoutMs: 120_000,
    inject: async (context) => {
      const pairs = databases.map((db) => context.pair(db));
      await at(context, 6_000);
      if (replication === 'async') {
        context.fault('standby stops receiving WAL (every commit from now on is on the primary only)');
        await Promise.all(pairs.map((pair) => pair.pauseReceipt()));
        await at(context, 8_000);
      }
      context.fault(`kill -9 of the primary (${databases.join(', ')})`);
      await Promise.all(pairs.map((pair) => pair.killPrimary()));
      await Promise.all(pairs.map((pair) => pair.promote()));
      context.restored('standby promoted; the endpoint sends clients to it');
      await Promise.all(pairs.map((pair) => pair.rebuildStandby()));
      context.restored('a new standby streams from the promoted primary');
    },
  };
}

async function at(context: ScenarioContext, ms: number): Promise<void> {
  await context.sleep(Math.max(0, ms - context.elapsed()));
}

export const postgresFailoverAsync = failover('postgres-failover-async', {
  replication: 'async',
  waitForStandby: true,
});
export const postgresFailoverSync = failover('postgres-failover-sync', {
  replication: 'sync',
  waitForStandby: false,
});
/** Today's relay and consumers on an async standby: the run must FAIL (ghosts), proving the checker sees them. */
export const postgresFailoverAsyncUnguarded = failover('postgres-failover-async-unguarded', {
  replication: 'async',
  waitForStandby: false,
});

/** Every database on a pair of its own, all three failed over at once: inventory's and billing's losses too. */
export const postgresFailoverAllAsync = failover('postgres-failover-all-async', {
  replication: 'async',
  waitForStandby: true,
  databases: ['orders', 'inventory', 'billing'],
});
export const postgresFailoverAllSync = failover('postgres-failover-all-sync', {
  replication: 'sync',
  waitForStandby: false,
  databases: ['orders', 'inventory', 'billing'],
});
