// A logged error says what failed and where — its message, its code, the operation and the target
// host — and nothing else: when PostgreSQL dropped a pooled connection, node-postgres's error
// carried the whole client (its statements' SQL, its type table, its socket, its password), which
// pino's default serializer wrote out, several kilobytes per line, once per connection.
import { Writable } from 'node:stream';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { ResponseError } from '@platformatic/kafka';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../src/database.ts';
import { defaultDatabaseTimeouts } from '../src/databaseTimeouts.ts';
import { createLogger } from '../src/logger.ts';

useLeakGuard();

const PASSWORD = 'not-for-the-log-7f3a';
const PARAMETER = 'parameter-value-91c2';

/** A logger whose lines land in an array, as they would in the process's stdout. */
function capturedLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger('test', 'info', sink), lines };
}

let db: TestDatabase;
let pool: pg.Pool | undefined;
beforeAll(async () => {
  db = await createTestDatabase('logger_errors');
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe('an error in the log', () => {
  it('of a dropped pooled connection: message, code, operation and host, no client, no password', async () => {
    const { logger, lines } = capturedLogger();
    // Trust authentication takes any password: one in the URL, as a deployment's would be.
    const url = new URL(db.url);
    url.password = PASSWORD;
    const db1 = createPool(url.toString(), defaultDatabaseTimeouts, (err) =>
      logger.warn({ err }, 'idle database connection lost'),
    );
    pool = db1;
    await db1.query('select $1::text', [PARAMETER]); // a parsed statement and a parameter on the client
    await queryOnce(
      db.url,
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [db.name],
    );
    const deadline = Date.now() + 10_000;
    while (lines.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? '';
    const { err } = JSON.parse(line);
    expect(err).toMatchObject({
      message: 'terminating connection due to administrator command',
      code: '57P01',
      operation: 'idle connection',
      target: `${url.hostname}:${url.port || 5432}/${db.name}`,
    });
    expect(line).not.toContain(PASSWORD);
    expect(line).not.toContain(PARAMETER);
    expect(line).not.toMatch(/"client"|"_types"|"socket"|select \$1/);
    expect(line.length).toBeLessThan(2_000);
  });

  it("of a failed statement: the server's answer without the row's values, and no credentials in a message", async () => {
    const { logger, lines } = capturedLogger();
    pool ??= createPool(db.url, defaultDatabaseTimeouts);
    await pool.query('create table if not exists keys (key text primary key)');
    await pool.query('insert into keys values ($1)', [PARAMETER]);
    const failed = await pool
      .query('insert into keys values ($1)', [PARAMETER])
      .catch((error: unknown) => error);
    logger.error({ err: failed }, 'insert failed');
    logger.error(
      { err: new Error(`cannot reach postgresql://postgres:${PASSWORD}@db.internal:5432/orders`) },
      'x',
    );
    const [statement, connection] = lines.map((line) => JSON.parse(line).err);
    expect(statement).toMatchObject({ code: '23505', operation: 'statement' });
    expect(statement.message).toContain('duplicate key value violates unique constraint');
    expect(lines.join('\n')).not.toContain(PARAMETER); // pg's detail: "Key (key)=(…) already exists."
    expect(connection.message).toBe('cannot reach postgresql://postgres:***@db.internal:5432/orders');
    expect(lines.join('\n')).not.toContain(PASSWORD);
  });

  it('of a Kafka response that failed: the group errors it holds, by name', () => {
    const { logger, lines } = capturedLogger();
    // OffsetCommit's answer as @platformatic/kafka builds it: one error for the response, one per
    // failed partition inside (27 is REBALANCE_IN_PROGRESS, 22 ILLEGAL_GENERATION).
    const failed = new ResponseError(
      8,
      9,
      {
        '/topics/0/partitions/0': [27, null],
        '/topics/0/partitions/1': [27, null],
        '/topics/0/partitions/2': [22, null],
      },
      undefined,
    );
    logger.warn({ err: failed }, 'offset commit failed');
    const [logged] = lines.map((line) => JSON.parse(line).err);
    expect(logged.message).toContain('OffsetCommit');
    expect(logged.reasons).toEqual(['REBALANCE_IN_PROGRESS', 'ILLEGAL_GENERATION']);
  });
});
