/**
 * What PostgreSQL itself spent on one database's statements during a measurement, from
 * pg_stat_statements (loaded on the test server: shared_preload_libraries). Only the bench's own
 * database is reset and read (pg_stat_statements_reset(userid, dbid, queryid) with 0 = any), so
 * other users of the shared server keep their statistics and do not leak into ours. Execution
 * time only: parsing, planning (off by default), the round trip and the commit's WAL flush wait
 * are not in total_exec_time.
 */
import pg from 'pg';

export type StatementStats = {
  calls: number;
  totalMs: number;
  meanMs: number;
  rows: number;
  /** The statement's text, whitespace folded, cut at 120 characters. */
  query: string;
};

/** A client on the server's `postgres` database, where the extension's view lives; undefined if it does not. */
export async function statementsReader(serverUrl: string): Promise<pg.Client | undefined> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query('select 1 from pg_stat_statements limit 1');
    return client;
  } catch {
    await client.end().catch(() => {});
    return undefined;
  }
}

export async function resetStatements(reader: pg.Client, database: string): Promise<void> {
  await reader.query(
    'select pg_stat_statements_reset(0, (select oid from pg_database where datname = $1), 0)',
    [database],
  );
}

/** The database's statements since its last reset, most total execution time first. */
export async function readStatements(reader: pg.Client, database: string): Promise<StatementStats[]> {
  const { rows } = await reader.query<{
    calls: string;
    total_ms: number;
    mean_ms: number;
    rows: string;
    query: string;
  }>(
    `select s.calls, s.total_exec_time as total_ms, s.mean_exec_time as mean_ms, s.rows, s.query
       from pg_stat_statements s join pg_database d on d.oid = s.dbid
      where d.datname = $1
      order by s.total_exec_time desc`,
    [database],
  );
  return rows.map((row) => ({
    calls: Number(row.calls),
    totalMs: Math.round(row.total_ms * 100) / 100,
    meanMs: Math.round(row.mean_ms * 1000) / 1000,
    rows: Number(row.rows),
    query: row.query.replace(/\s+/g, ' ').trim().slice(0, 120),
  }));
}
