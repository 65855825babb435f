/**
 * The outbox and inbox helpers run inside the caller's transaction. They accept either a Prisma
 * interactive-transaction client or a node-postgres client, described here by the one method of
 * each that they use, so this package depends on neither a generated Prisma client nor a pool.
 */
export type PrismaTransactionLike = {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
};

export type PgClientLike = {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
};

export type SqlExecutor = PrismaTransactionLike | PgClientLike;

/** Run one parameterized statement and return its rows, whichever client the caller holds. */
export async function queryRows<T>(executor: SqlExecutor, text: string, values: unknown[]): Promise<T[]> {
  if ('$queryRawUnsafe' in executor) return executor.$queryRawUnsafe<T[]>(text, ...values);
  const result = await executor.query(text, values);
  return result.rows as T[];
}
