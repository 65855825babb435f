import type { startChaosStack } from '@outbox/chaos';

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
