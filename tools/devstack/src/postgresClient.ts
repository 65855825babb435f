import pg from 'pg';

/** Runs `work` on a connection of its own to `url`, closed afterwards whatever happens. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
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
