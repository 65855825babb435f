import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { Scenario } from '../scenario.ts';

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
