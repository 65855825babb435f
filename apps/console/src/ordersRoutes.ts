// The console's order routes: the list with each order's saga, one order's timeline hop by hop, and
// placing an order through the orders API.
import { requireBearerToken } from '@outbox/runtime/bearer-auth';
import { HttpProblem } from '@outbox/runtime/problem';
import express from 'express';
import { z } from 'zod';
import type { ConsoleDeps } from './consoleDeps.ts';
import { ordersView } from './readModels/orders.ts';
import { orderTimelineView } from './readModels/orderTimeline.ts';
import { fetchWithTimeout, serviceNamed } from './services.ts';
import { TraceStoreProbe } from './traceStore.ts';

export function ordersRouter({ config, services, controls }: ConsoleDeps): express.Router {
  const router = express.Router();
  const traceStore = config.ZIPKIN_URL ? new TraceStoreProbe(config.ZIPKIN_URL) : undefined;
  router.get('/orders', async (_req, res) => {
    const views = {
      orders: serviceNamed(services, 'orders'),
      inventory: serviceNamed(services, 'inventory'),
      billing: serviceNamed(services, 'billing'),
    };
    const [orders, traces] = await Promise.all([
      ordersView(config.ORDERS_URL, views, config.TRACE_URL_TEMPLATE, {
        dualWriteAnomalies: controls?.writeMode !== undefined,
      }),
      traceStore?.status(),
    ]);
    if (traces === undefined) {
      res.json(orders);
      return;
    }
    // No links into a trace store that does not answer: they would open an error page.
    const linked = traces.available
      ? orders.orders
      : orders.orders.map(({ traceUrl: _unavailable, ...order }) => order);
    res.json({ ...orders, orders: linked, traces });
  });

  // One order's events across the system, hop by hop: where the time went (the page's timeline).
  router.get('/orders/:id/timeline', async (req, res) => {
    const id = z.uuid().safeParse(req.params.id);
    if (!id.success) throw new HttpProblem(400, 'Invalid order id', 'The order id must be a UUID.');
    res.json(
      await orderTimelineView(id.data, {
        ordersUrl: config.ORDERS_URL,
        services,
        zipkinUrl: config.ZIPKIN_URL,
        traceUrlTemplate: config.TRACE_URL_TEMPLATE,
      }),
    );
  });

  // Placing an order writes, so it needs the admin token like every other action (the Host check
  // keeps other sites' pages out, but it is not authentication).
  if (config.CONSOLE_ADMIN_TOKEN !== undefined) {
    router.post(
      '/orders',
      requireBearerToken(config.CONSOLE_ADMIN_TOKEN, 'CONSOLE_ADMIN_TOKEN'),
      placeOrder(config.ORDERS_URL),
    );
  }
  return router;
}

/**
 * The form posts here and the console passes the body and its Idempotency-Key on untouched, so the
 * page shows exactly what the orders API answers (201, or a problem+json naming each bad field).
 */
function placeOrder(ordersUrl: string): express.RequestHandler {
  return async (req, res) => {
    const key = req.get('idempotency-key');
    const answer = await fetchWithTimeout(
      `${ordersUrl}/orders`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(key === undefined ? {} : { 'idempotency-key': key }),
        },
        body: JSON.stringify(req.body),
      },
      // Longer than the API's own bounds (a statement, then the check of a commit whose answer
      // was lost), so the page shows the API's answer rather than the console's timeout.
      15_000,
    );
    for (const name of ['idempotent-replayed', 'retry-after']) {
      const value = answer.headers.get(name);
      if (value !== null) res.set(name, value);
    }
    res
      .status(answer.status)
      .type(answer.headers.get('content-type') ?? 'application/json')
      .send(await answer.text());
  };
}
