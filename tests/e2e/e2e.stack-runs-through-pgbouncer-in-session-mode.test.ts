import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { type PgBouncer, startPgBouncer } from '@outbox/devstack/testing/pg-bouncer';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce, testPostgresUrl } from '@outbox/devstack/testing/test-database';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Every process of the system (three services, three relays) reaches its database through
 * Debian's PgBouncer in session pooling mode, the mode each of them needs (docs/production.md,
 * "Through PgBouncer"): they migrate through it (an advisory lock), the relays are woken by
 * LISTEN/NOTIFY through it and run named prepared statements, and an order goes through the whole
 * saga. PgBouncer drops the startup parameters that carry the processes' timeouts, so they are set
 * on each database, as in production behind a pooler.
 */

useLeakGuard();

let bouncer: PgBouncer | undefined;
let stack: Stack | undefined;

/** The session settings the processes ask for at connect, which PgBouncer cannot pass on. */
async function setOnDatabase(url: string): Promise<string> {
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: testPostgresUrl });
  await admin.connect();
  try {
    const database = pg.escapeIdentifier(name);
    await admin.query(`alter database ${database} set statement_timeout = '5s'`);
    await admin.query(`alter database ${database} set idle_in_transaction_session_timeout = '10s'`);
    await admin.query(`alter database ${database} set plan_cache_mode = 'force_custom_plan'`);
  } finally {
    await admin.end();
  }
  if (!bouncer) throw new Error('no PgBouncer');
  return bouncer.urlFor(url);
}

beforeAll(async () => {
  bouncer = await startPgBouncer(testPostgresUrl, 'session');
  stack = await startStack('pgbouncer', sharedKafkaBrokers(), undefined, { reachDatabase: setOnDatabase });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await bouncer?.stop();
});

describe('the whole system behind PgBouncer in session pooling mode', () => {
  it('takes an order and carries it through the saga to CONFIRMED', async () => {
    if (!stack || !bouncer) throw new Error('no stack');
    const res = await fetch(`${stack.services.orders.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        customerId: 'pooled',
        currency: 'EUR',
        items: [{ sku: 'KB-101', quantity: 1 }],
      }),
    });
    expect(res.status).toBe(201);
    const order = (await res.json()) as { id: string };
    const confirmed = await eventually(
      'the order confirmed',
      async () => {
        const body = (await (await fetch(`${stack?.services.orders.url}/orders/${order.id}`)).json()) as {
          status: string;
        };
        return body.status === 'CONFIRMED' ? body : undefined;
      },
      60_000,
    );
    expect(confirmed.status).toBe('CONFIRMED');
    // The processes hold their connections through the pooler: clients of each database there.
    const clients = await bouncer.clientsByDatabase();
    for (const db of Object.values(stack.databases))
      expect(clients.get(db.name) ?? 0, `clients of ${db.name}`).toBeGreaterThan(0);
    // The relay published the order's events, its claims run as named prepared statements there:
    // ORDER_CREATED before the saga could answer, and ORDER_CONFIRMED, written with the confirmation
    // itself, once the relay's next claim has taken it.
    const ordersDatabase = stack.databases.orders.url;
    const outbox = await eventually(
      "the order's events published",
      async () => {
        const rows = await queryOnce<{ event_type: string; status: string }>(
          ordersDatabase,
          'select event_type, status from outbox where aggregate_id = $1',
          [order.id],
        );
        return rows.every((row) => row.status === 'published') ? rows : undefined;
      },
      30_000,
    );
    expect(outbox.map((row) => row.event_type).sort()).toEqual(['ORDER_CONFIRMED', 'ORDER_CREATED']);
  });
});
