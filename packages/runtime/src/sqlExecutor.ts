/**
 * The outbox and inbox helpers, and the consumers' handlers, run inside the caller's transaction.
 * They accept either a Prisma interactive-transaction client or a node-postgres client, described
 * here by the one method of each that they use, so this package depends on neither a generated
 * Prisma client nor a pool.
 */
export type PrismaTransactionLike = {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
};

export type PgClientLike = {
  query(config: {
    text: string;
    values?: unknown[];
    name?: string;
  }): Promise<{ rows: unknown[]; rowCount: number | null }>;
};

export type SqlExecutor = PrismaTransactionLike | PgClientLike;

/**
 * Statement names by text. Every statement is a constant of the code with `$n` parameters, so the
 * set is small and fixed; named, node-postgres prepares each once per connection and PostgreSQL
 * skips parsing and planning it again on every call (docs/performance.md).
 */
const names = new Map<string, string>();
function nameOf(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `outbox_q${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}

/** Run one parameterized statement and return its rows, whichever client the caller holds. */
export async function queryRows<T>(executor: SqlExecutor, text: string, values: unknown[]): Promise<T[]> {
  if ('$queryRawUnsafe' in executor) return executor.$queryRawUnsafe<T[]>(text, ...values);
  const result = await executor.query({ name: nameOf(text), text, values });
  return result.rows as T[];
}
