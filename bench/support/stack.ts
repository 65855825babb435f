import type { startChaosStack } from '@outbox/chaos';
import { queryOnce } from '@outbox/devstack/testing/test-database';

/** The PostgreSQL server the system benchmarks create their databases on. */
export const postgresUrl = process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** The processes of the chaos suite's stack that the system benchmarks measure (besides Kafka and PostgreSQL). */
export const STACK_PROCESSES = [
  'orders',
  'inventory',
  'billing',
  'relay-orders',
  'relay-inventory',
  'relay-billing',
] as const;

/** The stack's three databases by service: what collectOutcome and the CDC connectors read. */
export function stackDatabaseUrls(stack: Awaited<ReturnType<typeof startChaosStack>>) {
  const { orders, inventory, billing } = stack.databases;
  return { orders: orders.url, inventory: inventory.url, billing: billing.url };
}

/** The PostgreSQL backends serving the stack's three databases, now. */
export async function backendPids(stack: Awaited<ReturnType<typeof startChaosStack>>): Promise<number[]> {
  const names = Object.values(stack.databases).map((db) => db.name);
  const rows = await queryOnce<{ pid: number }>(
    postgresUrl,
    'select pid from pg_stat_activity where datname = any($1::text[])',
    [names],
  );
  return rows.map((row) => row.pid);
}
