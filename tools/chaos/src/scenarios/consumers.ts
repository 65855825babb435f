// The consumers broken under load: killed between their commit and their offset commit, inside a
// chunk's transaction, restarted over and over, kept waiting by a slow payment provider; and the
// proof that the checker sees a consumer without its duplicate check.
import pg from 'pg';
import type { Scenario, ScenarioContext } from '../scenario.ts';
import { DATABASES, type DatabaseName } from '../stack.ts';
import { startAndAwaitCrash } from './support.ts';

export const consumerKillAfterCommit: Scenario = {
  name: 'consumer-kill-after-commit',
  breaks:
    'inventory, billing and orders each killed (kill -9) right after an event’s transaction committed and before its Kafka offset did',
  expectation:
    'The event is delivered again to the restarted consumer (after the dead member’s session times out), ' +
    'found in processed_events and skipped: no second reservation, payment, reply or history entry.',
  inject: async (context) => {
    await context.sleep(3_000);
    await Promise.all(
      DATABASES.map(async (name) => {
        await context.stack.process(name).stop();
        context.fault(`${name} restarted with FAULT_KILL_AFTER_COMMIT=true`);
        const crashed = await crashOnAnEvent(context, name, { FAULT_KILL_AFTER_COMMIT: 'true' });
        context.log(crashed ? `${name} killed itself after its commit` : `${name}: fault did not fire`);
        await context.stack.restart(name);
      }),
    );
    context.restored('inventory, billing and orders restarted without the fault');
  },
};

export const consumerKillMidChunk: Scenario = {
  name: 'consumer-kill-mid-chunk',
  breaks:
    'inventory, billing and orders each stopped while the load runs, so a backlog builds, then restarted with a fault ' +
    'that kills them (kill -9) inside the transaction of their first chunk of two events or more, before COMMIT',
  expectation:
    'The chunk dies whole: none of its reservations, payments, replies or processed_events rows is kept. The restarted ' +
    'consumer reads the same events again and applies each once.',
  inject: async (context) => {
    await context.sleep(3_000);
    await Promise.all(
      DATABASES.map(async (name) => {
        await context.stack.process(name).stop();
        context.fault(`${name} stopped; its backlog grows`);
        await context.sleep(2_000);
        context.fault(`${name} restarted with FAULT_KILL_MID_CHUNK=true`);
        const crashed = await crashOnAnEvent(context, name, { FAULT_KILL_MID_CHUNK: 'true' });
        if (crashed) context.fault(`${name} killed itself mid-chunk`);
        else context.log(`${name}: fault did not fire`);
        await context.stack.restart(name);
      }),
    );
    context.restored('inventory, billing and orders restarted without the fault');
  },
};

/**
 * A consumer started with a fault armed that fires on an event it applies; the trigger order
 * makes sure an event reaches it, however late it joined its group.
 */
const crashOnAnEvent = (context: ScenarioContext, name: DatabaseName, faultEnv: Record<string, string>) =>
  startAndAwaitCrash(context, name, faultEnv, { timeoutMs: 60_000, trigger: true });

const ROUNDS: { name: DatabaseName; how: 'kill' | 'stop' }[] = [
  { name: 'inventory', how: 'stop' },
  { name: 'billing', how: 'stop' },
  { name: 'orders', how: 'stop' },
  { name: 'inventory', how: 'kill' },
  { name: 'billing', how: 'stop' },
  { name: 'inventory', how: 'stop' },
  { name: 'billing', how: 'kill' },
];

export const consumerRestartLoop: Scenario = {
  name: 'consumer-restart-loop',
  breaks: 'consumers restarted over and over under load: SIGTERM and kill -9, one every 2 s',
  expectation:
    'A graceful stop commits the offset of the event in hand and leaves the group; a kill -9 leaves it ' +
    'uncommitted and the group waits out the session: either way no event is skipped or applied twice.',
  inject: async (context) => {
    await context.sleep(2_000);
    for (const { name, how } of ROUNDS) {
      context.fault(`${how === 'kill' ? 'kill -9' : 'SIGTERM'} ${name}, then start it again`);
      const process = context.stack.process(name);
      await (how === 'kill' ? process.kill() : process.stop());
      await context.stack.restart(name);
      await context.sleep(2_000);
    }
    context.restored('last consumer restarted');
  },
};

/** Longer than Prisma's default interactive-transaction timeout (5 s): the old livelock. */
const PROVIDER_LATENCY_MS = 6_000;
const SLOW_PROVIDER_LOAD = { rate: 1, durationMs: 10_000 };

export const slowPaymentProvider: Scenario = {
  name: 'slow-payment-provider',
  breaks: `the payment provider answers every call in ${PROVIDER_LATENCY_MS / 1000} s, under load, for the whole run`,
  expectation:
    'Billing asks the provider before it opens the event transaction, so no transaction, connection or row ' +
    'lock is held while it waits: billing is slow, never stuck, and every order is decided. (With the call ' +
    'inside the transaction, each attempt outlived the 5 s transaction timeout and was retried for ever.)',
  stack: {
    env: {
      billing: { PAYMENT_LATENCY_MS: String(PROVIDER_LATENCY_MS), PAYMENT_TIMEOUT_MS: '8000' },
    },
  },
  load: SLOW_PROVIDER_LOAD,
  // Billing takes about one provider latency per event, one event at a time.
  quiescenceTimeoutMs: 180_000,
  inject: async (context) => {
    context.fault(`payment provider latency ${PROVIDER_LATENCY_MS} ms on every call`);
    const longest = await longestBillingTransactionMs(
      context,
      SLOW_PROVIDER_LOAD.durationMs + PROVIDER_LATENCY_MS * 3,
    );
    context.log(`longest billing transaction seen: ${longest} ms`);
    if (longest >= PROVIDER_LATENCY_MS)
      throw new Error(
        `a billing transaction stayed open ${longest} ms, as long as a provider call: the provider is ` +
          'called inside the transaction (does the consumer run the handler’s prepare step first?)',
      );
    context.restored('load over (the provider stays slow)');
  },
};

/**
 * Watch billing's database sessions for `durationMs` and return the age of the oldest open
 * transaction seen (the relay's own short claims excluded): with the provider called inside the
 * transaction it reaches the provider's latency; outside, a few milliseconds.
 */
async function longestBillingTransactionMs(context: ScenarioContext, durationMs: number): Promise<number> {
  const client = new pg.Client({ connectionString: context.stack.databases.billing.url });
  await client.connect();
  let longest = 0;
  try {
    for (const deadline = Date.now() + durationMs; Date.now() < deadline; await context.sleep(200)) {
      const { rows } = await client.query<{ ms: number | null }>(
        `select (extract(epoch from max(now() - xact_start)) * 1000)::int as ms
           from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()
            and xact_start is not null and application_name not like 'relay-%'`,
      );
      longest = Math.max(longest, rows[0]?.ms ?? 0);
    }
    return longest;
  } finally {
    await client.end();
  }
}

/**
 * The proof that the checker can fail: the orders consumer built without its duplicate check
 * (INBOX_DEDUP=off), then made to receive a reply twice (killed between its commit and its
 * offset commit). Inventory and billing are left intact: with dedup off their second line of
 * defence (primary keys on reservations and payments) would refuse the second effect and stall
 * the partition instead, a louder failure; the orders history has no such key.
 */
export const brokenDedup: Scenario = {
  name: 'broken-build-dedup-off',
  breaks:
    'a broken build: the orders consumer applies redelivered events again (INBOX_DEDUP=off), and is killed after a commit so a reply is redelivered (its group session: 10 s)',
  expectation:
    'The checker FAILS applied-exactly-once: the redelivered reply is recorded twice in the order history.',
  load: { rate: 10, durationMs: 10_000 },
  // The killed member holds its group's rebalance until its session ends: 10 s instead of the
  // default 30 s, since what this run shows is the second application, not how soon it comes.
  stack: { env: { orders: { KAFKA_SESSION_TIMEOUT_MS: '10000' } } },
  inject: async (context) => {
    await context.sleep(2_000);
    await context.stack.process('orders').stop();
    context.fault('orders restarted with INBOX_DEDUP=off and FAULT_KILL_AFTER_COMMIT=true');
    const crashed = await crashOnAnEvent(context, 'orders', {
      INBOX_DEDUP: 'off',
      FAULT_KILL_AFTER_COMMIT: 'true',
    });
    context.log(crashed ? 'orders killed itself after its commit' : 'orders: fault did not fire');
    await context.stack.restart('orders', { INBOX_DEDUP: 'off' });
    context.restored('orders restarted, still with INBOX_DEDUP=off');
  },
};
