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
