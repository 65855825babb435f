// The polling relays broken under load: killed mid-batch, after the broker's ack, with a second
// batch in flight, side by side with competing relays, and cut off their database.
import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { Scenario, ScenarioContext } from '../scenario.ts';
import { DATABASES, type ProcessName } from '../stack.ts';
import { killAndRestart, startAndAwaitCrash, waitUntilMidBatch } from './support.ts';

export const relayKill9: Scenario = {
  name: 'relay-kill-9',
  breaks: 'kill -9 of each relay while it holds a leased batch, restarted 1 s later',
  expectation:
    'The leased rows are claimed again when the lease (5 s here) expires and published again: ' +
    'duplicates on the topic at most, never a loss; consumers skip the duplicates.',
  inject: async (context) => {
    await context.sleep(3_000);
    for (const database of DATABASES) {
      const relay = `relay-${database}` as const;
      const midBatch = await waitUntilMidBatch(context.stack.databases[database].url, relay);
      await killAndRestart(context, relay, 1_000, midBatch ? ' (mid-batch)' : ' (between batches)');
      await context.sleep(1_500);
    }
  },
};

const CRASHES = 3;

export const relayCrashAfterPublish: Scenario = {
  name: 'relay-crash-after-publish',
  breaks: `relay-orders killed (kill -9) right after the broker acknowledged a batch and before it marked it published, ${CRASHES} times`,
  expectation:
    'Each time, the acknowledged batch is still leased in the outbox; once the lease expires it is published ' +
    'again: those events are on the topic twice, first deliveries still in order, each applied once.',
  inject: async (context) => {
    await context.sleep(2_000);
    await context.stack.process('relay-orders').stop();
    for (let crash = 1; crash <= CRASHES; crash++) {
      context.fault(`relay-orders started with RELAY_FAULT=crash-after-publish:3 (crash ${crash})`);
      const crashed = await startAndAwaitCrash(context, 'relay-orders', {
        RELAY_FAULT: 'crash-after-publish:3',
      });
      context.log(crashed ? 'relay-orders killed itself after the ack' : 'fault did not fire');
    }
    await context.stack.restart('relay-orders');
    context.restored('relay-orders started without the fault');
  },
};

const PIPELINED_CRASHES = 2;
const LATENCY_MS = 150;
/** The third pipelined claim: by then the relay's topics exist, so its sends reach the broker. */
const PIPELINED_FAULT = 'crash-with-pipelined-batch:3';

/**
 * The relay claims the next batch while the broker has the previous one when there is a backlog
 * (apps/relay/src/engine/relay.ts). This kills it in exactly that state: the fault point fires when a
 * claim returns rows while a publish is still unanswered. The broker is slowed down so that a
 * publish lasts long enough for a claim to return behind it, and the relay is stopped first so
 * that a backlog is waiting when it starts.
 */
export const relayKill9Pipelined: Scenario = {
  name: 'relay-kill-9-pipelined',
  breaks:
    `relay-orders killed (kill -9) holding two leased batches, one sent to a slow broker (${LATENCY_MS} ms each way) ` +
    `and the next one claimed behind it, ${PIPELINED_CRASHES} times, each after a 2 s stop that leaves a backlog`,
  expectation:
    'Both batches stay leased in the outbox; once the lease expires the next relay claims them again, ' +
    'each aggregate still head first: nothing lost, per-order order kept, the sent batch at most twice on the topic.',
  needs: { ownBroker: true, brokerLatencyMs: 0 },
  inject: async (context) => {
    const proxy = context.brokerProxy;
    await context.sleep(2_000);
    for (let crash = 1; crash <= PIPELINED_CRASHES; crash++) {
      await context.stack.process('relay-orders').stop();
      await context.sleep(2_000);
      proxy.latencyMs = LATENCY_MS;
      context.fault(
        `broker latency ${LATENCY_MS} ms; relay-orders started with RELAY_FAULT=${PIPELINED_FAULT} (crash ${crash})`,
      );
      const crashed = await startAndAwaitCrash(context, 'relay-orders', { RELAY_FAULT: PIPELINED_FAULT });
      proxy.latencyMs = 0;
      if (!crashed) {
        context.log('fault did not fire');
        continue;
      }
      const batches = await leasedBatches(context);
      context.fault(
        `relay-orders killed itself holding ${batches.length} leased batches (${batches.join(' + ')} events)`,
      );
    }
    await context.stack.restart('relay-orders');
    context.restored('relay-orders started without the fault, latency removed');
  },
};

/**
 * The dead relay's leased rows, batch by batch: rows claimed by one statement share their
 * lease's expiry (now() is the transaction's start), so each distinct expiry is one batch.
 */
async function leasedBatches(context: ScenarioContext): Promise<number[]> {
  const rows = await queryOnce<{ n: number }>(
    context.stack.databases.orders.url,
    `select count(*)::int as n from outbox
      where status = 'in_flight' and lease_owner = $1
      group by lease_expires_at order by lease_expires_at`,
    ['relay-orders'],
  );
  return rows.map((row) => row.n);
}

const ORDER_RELAYS: ProcessName[] = ['relay-orders', 'relay-orders-2', 'relay-orders-3'];

export const competingRelays: Scenario = {
  name: 'competing-relays',
  breaks:
    'three relays on the orders outbox and two on each of the others; one orders relay after another killed with kill -9 every 2.5 s',
  expectation:
    'Relays never publish one row at the same time (SKIP LOCKED claims, leases); per aggregate the events ' +
    "stay in seq order; a killed relay's batch is taken over after its lease, as duplicates at most.",
  stack: { extraRelays: { orders: 2, inventory: 1, billing: 1 } },
  inject: async (context) => {
    await context.sleep(2_000);
    for (let round = 0; round < 5; round++) {
      const relay = ORDER_RELAYS[round % ORDER_RELAYS.length] ?? 'relay-orders';
      const midBatch = await waitUntilMidBatch(context.stack.databases.orders.url, relay, 3_000);
      await killAndRestart(context, relay, 1_000, midBatch ? ' (mid-batch)' : ' (between batches)');
      await context.sleep(1_500);
    }
  },
};

export const relayConnectionDropped: Scenario = {
  name: 'relay-connection-dropped',
  breaks:
    "the relays' database connections terminated (pg_terminate_backend by application_name) every 2 s, 5 times",
  expectation:
    'A relay whose claim or mark fails backs off and retries on a new connection; a lost mark means its leased ' +
    'rows are published again after the lease (duplicates, never a loss); its LISTEN connection reconnects.',
  inject: async (context) => {
    const { databases } = context.stack;
    const names = Object.values(databases).map((db) => db.name);
    for (let round = 0; round < 5; round++) {
      await context.sleep(2_000);
      const [row] = await queryOnce<{ terminated: number }>(
        databases.orders.url,
        `select count(*) filter (where pg_terminate_backend(pid))::int as terminated
           from pg_stat_activity
          where application_name like 'relay-%' and datname = any($1::text[])`,
        [names],
      );
      context.fault(`terminated ${row?.terminated ?? 0} relay connections`);
    }
    context.restored('connections left alone');
  },
};
