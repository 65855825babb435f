import pg from 'pg';

/**
 * Runs `work` on a connection of its own to `url`, closed afterwards whatever happens. An error of
 * the connection or of a statement rejects; one that comes after the work (a server killed, say) is
 * nobody's to handle any more.
 */
export async function withClient<T>(
  url: string,
  work: (client: pg.Client) => Promise<T>,
  config: pg.ClientConfig = {},
): Promise<T> {
  const client = new pg.Client({ ...config, connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Runs one query on a connection of its own and closes it again (one-off statements, assertions in tests). */
export async function queryOnce<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  return withClient(url, async (client) => (await client.query<T>(sql, values)).rows);
}
