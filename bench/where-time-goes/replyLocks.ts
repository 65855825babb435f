/**
 * How often the orders service locked an order row to record inventory's and billing's replies, over
 * the orders of the load window once every one of them is decided (`--reply-locks`):
 *   - calls per order of the reply consumer's lock statement (several orders share a call when
 *     their replies share a chunk);
 *   - rows per order, i.e. how many times each order row was locked: 2 when the two replies of an
 *     order land in two transactions, 1 when they land in one;
 *   - the reply consumer's transactions per order (its processed_events inserts, one per chunk).
 * Counts, not times: the machine's load moves how replies meet in chunks, not what a chunk costs.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { postgresUrl } from '../support/stack.ts';

export type ReplyLockCounts = Awaited<ReturnType<typeof replyLockCounts>>;

/** The orders database's clock now: where the window's orders begin. */
export const databaseNow = async (ordersUrl: string) =>
  (await queryOnce<{ now: Date }>(ordersUrl, 'select now() as now'))[0]?.now ?? new Date();

/**
 * Waits up to two minutes for every order placed since `from` to be decided, then reads what the
 * reply consumer's statements did for them. Every order the stack holds counts, not only those whose
 * answer reached the load generator: on a starved machine a request can time out at the client
 * after its order committed, and that order's replies lock its row all the same.
 */
export async function replyLockCounts(orders: { name: string; url: string }, from: Date, answered: number) {
  const held = () =>
    queryOnce<{ n: number; decided: number }>(
      orders.url,
      `select count(*)::int as n, count(*) filter (where status <> 'PENDING')::int as decided
         from orders where created_at >= $1`,
      [from],
    ).then((rows) => rows[0] ?? { n: 0, decided: 0 });
  let now = await held();
  for (const until = Date.now() + 120_000; now.decided < now.n && Date.now() < until; now = await held())
    await sleep(1_000);
  // Only the reply consumer locks orders `for update` by a list of ids and inserts into processed_events.
  const statements = await queryOnce<{ kind: string; calls: number; rows: number }>(
    postgresUrl,
    `select case when s.query like '%from orders where id = any%for update%' then 'lock'
                 else 'dedup' end as kind, sum(s.calls)::int as calls, sum(s.rows)::int as rows
       from pg_stat_statements s join pg_database d on d.oid = s.dbid
      where d.datname = $1
        and (s.query like '%from orders where id = any%for update%'
             or s.query like 'insert into processed_events%')
      group by 1`,
    [orders.name],
  );
  const of = (kind: string) => statements.find((s) => s.kind === kind) ?? { calls: 0, rows: 0 };
  const perOrder = (n: number) => Number((n / Math.max(1, now.n)).toFixed(2));
  const lock = of('lock');
  const dedup = of('dedup');
  return {
    orders: now.n,
    answered,
    decided: now.decided,
    lockCalls: lock.calls,
    lockRows: lock.rows,
    replyTransactions: dedup.calls,
    lockCallsPerOrder: perOrder(lock.calls),
    lockRowsPerOrder: perOrder(lock.rows),
    replyTransactionsPerOrder: perOrder(dedup.calls),
  };
}
