import type { AddressInfo } from 'node:net';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import type { DatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import { pino } from 'pino';
import { createApp, listen } from '../../src/app.ts';
import { defaultPoolSize } from '../../src/config.ts';
import { createPrisma, migrate, type Prisma } from '../../src/db.ts';
import type { AdmissionOptions } from '../../src/http/admission.ts';
import type { OrderBatchOptions } from '../../src/orders/orderBatches.ts';

/**
 * An admission limit that queues every request rather than shedding any: for the tests that send
 * many requests at once to prove they are correct together, not that the API sheds load.
 */
export const QUEUE_EVERY_REQUEST: AdmissionOptions = {
  limit: 10,
  queueLength: 10_000,
  queueTimeoutMs: 60_000,
  retryAfterSeconds: 1,
};

export type OrdersApi = { db: TestDatabase; prisma: Prisma; baseUrl: string; close(): Promise<void> };

/**
 * The orders API from its factory, on an ephemeral port, over a fresh migrated database of its
 * own. `databaseUrl` overrides the database the app talks to (e.g. one that is not there), or
 * rewrites the URL of its own (e.g. to go through a proxy); `timeouts`, `admission` and
 * `orderBatches` replace the defaults.
 */
export async function startOrdersApi(
  label: string,
  options: {
    databaseUrl?: string | ((own: string) => string);
    timeouts?: DatabaseTimeouts;
    admission?: AdmissionOptions;
    orderBatches?: OrderBatchOptions;
  } = {},
): Promise<OrdersApi> {
  const db = await createTestDatabase(label);
  await migrate(db.url);
  const { databaseUrl = db.url } = options;
  const prisma = createPrisma(
    typeof databaseUrl === 'string' ? databaseUrl : databaseUrl(db.url),
    options.timeouts,
    defaultPoolSize,
  );
  const app = createApp({
    prisma,
    logger: pino({ level: 'silent' }),
    registry: createMetricsRegistry('orders-test'),
    ...(options.admission ? { admission: options.admission } : {}),
    ...(options.orderBatches ? { orderBatches: options.orderBatches } : {}),
  });
  const server = await listen(app, 0, '127.0.0.1');
  return {
    db,
    prisma,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await prisma.$disconnect();
      await db.drop();
    },
  };
}

export function postOrder(
  baseUrl: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${baseUrl}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** How many orders `customerId` has in `api`'s database, and how many outbox rows they have. */
export async function rowsOfCustomer(api: OrdersApi, customerId: string) {
  const [row] = await queryOnce<{ orders: number; events: number }>(
    api.db.url,
    `select (select count(*) from orders where customer_id = $1)::int as orders,
            (select count(*) from outbox o join orders r on r.id::text = o.aggregate_id
              where r.customer_id = $1)::int as events`,
    [customerId],
  );
  return row;
}

/** The sum of the series of `name` on the API's /metrics whose line contains `label` (e.g. `state="queued"`). */
export async function metric(api: OrdersApi, name: string, label = ''): Promise<number> {
  const text = await (await fetch(`${api.baseUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name) && line.includes(label))
    .reduce((sum, line) => sum + Number(line.split(' ')[1]), 0);
}
