import pg from 'pg';
import type { Scenario, ScenarioContext } from '../scenario.ts';
import { startAndAwaitCrash } from './support.ts';

const CRASHES = 2;
const LATENCY_MS = 150;
const RELAY = 'relay-orders';
/** The third pipelined claim: by then the relay's topics exist, so its sends reach the broker. */
const FAULT = 'crash-with-pipelined-batch:3';

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
    `and the next one claimed behind it, ${CRASHES} times, each after a 2 s stop that leaves a backlog`,
  expectation:
    'Both batches stay leased in the outbox; once the lease expires the next relay claims them again, ' +
    'each aggregate still head first: nothing lost, per-order order kept, the sent batch at most twice on the topic.',
  needs: { ownBroker: true, brokerLatencyMs: 0 },
  inject: async (context) => {
    const proxy = context.brokerProxy;
    if (!proxy) throw new Error('needs.brokerLatencyMs');
    await context.sleep(2_000);
    for (let crash = 1; crash <= CRASHES; crash++) {
      await context.stack.process(RELAY).stop();
      await context.sleep(2_000);
      proxy.latencyMs = LATENCY_MS;
      context.fault(
        `broker latency ${LATENCY_MS} ms; relay-orders started with RELAY_FAULT=${FAULT} (crash ${crash})`,
      );
      const crashed = await startAndAwaitCrash(context, RELAY, { RELAY_FAULT: FAULT });
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
    await context.stack.restart(RELAY);
    context.restored('relay-orders started without the fault, latency removed');
  },
};

/**
 * The dead relay's leased rows, batch by batch: rows claimed by one statement share their
 * lease's expiry (now() is the transaction's start), so each distinct expiry is one batch.
 */
async function leasedBatches(context: ScenarioContext): Promise<number[]> {
  const client = new pg.Client({ connectionString: context.stack.databases.orders.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from outbox
        where status = 'in_flight' and lease_owner = $1
        group by lease_expires_at order by lease_expires_at`,
      [RELAY],
    );
    return rows.map((row) => row.n);
  } finally {
    await client.end();
  }
}
