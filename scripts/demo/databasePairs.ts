// `./dev demo --failover`: each service's database on its own primary and streaming standby (the
// dev pair of tools/devstack's postgresPair.ts: private PostgreSQL 15 clusters under .local/),
// reached through the pair's endpoint, which a promotion moves as a virtual IP would. Each
// service connects to "the primary" and keeps its DATABASE_URL across a failover.
import { type PostgresPair, startPostgresPair } from '@outbox/devstack/postgres-pair';
import { startTogether } from '@outbox/devstack/service-process';
import type { DatabaseUrls } from './apps.ts';
import { running } from './lifecycle.ts';
import { print } from './output.ts';
import type { DemoSettings } from './settings.ts';

export const DATABASES = ['orders', 'inventory', 'billing'] as const;
export type DatabaseName = (typeof DATABASES)[number];
export type DatabasePairs = Record<DatabaseName, PostgresPair>;

/** Three pairs, started side by side; each is removed on Ctrl-C (lifecycle.ts), data and all. */
export async function startDatabasePairs(settings: DemoSettings): Promise<DatabasePairs> {
  const replication = settings.failover?.replication ?? 'async';
  print(
    `Starting a PostgreSQL primary and ${replication === 'sync' ? 'a synchronous' : 'an asynchronous'} standby for each of orders, inventory and billing…`,
  );
  const pairs: Partial<DatabasePairs> = {};
  running.databasePairs = [];
  await startTogether(DATABASES, async (database) => {
    const pair = await startPostgresPair({ label: `demo-${database}`, replication });
    pairs[database] = pair;
    running.databasePairs?.push(pair);
  });
  const all = pairs as DatabasePairs;
  for (const database of DATABASES) {
    const pair = all[database];
    print(
      `  ${database.padEnd(9)} primary :${pair.primary.port}, standby :${pair.standby?.port} (${replication}), the services reach it at ${pairDatabaseUrls(all)[database]}`,
    );
  }
  return all;
}

/** Each service's database on its own pair, through the endpoint that follows promotions. */
export function pairDatabaseUrls(pairs: DatabasePairs): DatabaseUrls {
  const on = (database: DatabaseName) => pairs[database].url.replace(/\/postgres$/, `/${database}`);
  return { orders: on('orders'), inventory: on('inventory'), billing: on('billing') };
}
