import type { Replication } from '@outbox/devstack/postgres-pair';
import type { Scenario, ScenarioContext } from '../scenario.ts';

type Variant = {
  replication: Replication;
  /**
   * DATABASE_WAIT_FOR_STANDBY for orders and its relay: the relay publishes, and the orders
   * consumer commits its offsets, only what the standby holds (runtime's standbyWait.ts).
   */
  waitForStandby: boolean;
};

const LOST_WINDOW = '2 s';

/**
 * The orders database's primary dies (kill -9 of every process of it) under load and its standby
 * is promoted; the endpoint the services connect through moves to it, as a virtual IP would, and
 * a new standby is built from the promoted primary. With async replication the standby stops
 * receiving WAL at least 2 s before the kill, so the failover certainly loses those commits.
 */
function failover(name: string, { replication, waitForStandby }: Variant): Scenario {
  const wait: Record<string, string> = waitForStandby ? { DATABASE_WAIT_FOR_STANDBY: 'standby' } : {};
  return {
    name,
    breaks:
      `the orders database's primary killed with kill -9 under load and its standby promoted (${replication} replication` +
      (replication === 'async'
        ? `; the standby stopped receiving WAL at least ${LOST_WINDOW} before, so those commits are lost)`
        : ')') +
      (waitForStandby ? '; orders and its relay wait for the standby' : '; nothing waits for the standby'),
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
    needs: { postgresPair: replication },
    stack: {
      env: {
        orders: wait,
        'relay-orders': wait,
      },
    },
    load: { rate: 50, durationMs: 20_000 },
    quiescenceTimeoutMs: 120_000,
    inject: async (context) => {
      const pair = context.pair;
      if (!pair) throw new Error('needs.postgresPair');
      await at(context, 6_000);
      if (replication === 'async') {
        context.fault('standby stops receiving WAL (every commit from now on is on the primary only)');
        await pair.pauseReceipt();
        await at(context, 8_000);
      }
      context.fault('kill -9 of the primary');
      await pair.killPrimary();
      await pair.promote();
      context.restored('standby promoted; the endpoint sends clients to it');
      await pair.rebuildStandby();
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
