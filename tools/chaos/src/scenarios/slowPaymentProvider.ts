import pg from 'pg';
import type { Scenario, ScenarioContext } from '../scenario.ts';

/** Longer than Prisma's default interactive-transaction timeout (5 s): the old livelock. */
const PROVIDER_LATENCY_MS = 6_000;
const LOAD = { rate: 1, durationMs: 10_000 };

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
  load: LOAD,
  // Billing takes about one provider latency per event, one event at a time.
  quiescenceTimeoutMs: 180_000,
  inject: async (context) => {
    context.fault(`payment provider latency ${PROVIDER_LATENCY_MS} ms on every call`);
    const longest = await longestBillingTransactionMs(context, LOAD.durationMs + PROVIDER_LATENCY_MS * 3);
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
