import { errorMessage, fetchWithTimeout, type Service } from '../services.ts';
import type { OrdersResponse, OrderView } from '../shared/api.ts';

const RECENT_ORDERS = 8;

/**
 * The trace id of each order's ORDER_CREATED, from the trace context `writeEvent` stored in the
 * outbox row (W3C traceparent `00-<trace id>-<span id>-<flags>`). Published rows are deleted after
 * the relay's retention, so older orders have none.
 */
const traceIdsSql = `
  select aggregate_id, split_part(headers->>'traceparent', '-', 2) as trace_id
    from outbox
   where aggregate_type = 'order' and event_type = 'ORDER_CREATED'
     and aggregate_id = any($1::text[]) and headers ? 'traceparent'`;

/**
 * The newest orders with their saga progress, as the orders API reports them: the list for the
 * order of things, then each order for its history (the replies it received, in order).
 */
export async function ordersView(
  ordersUrl: string,
  orders: Service,
  traceUrlTemplate: string | undefined,
): Promise<OrdersResponse> {
  try {
    const list = await fetchWithTimeout(`${ordersUrl}/orders?limit=${RECENT_ORDERS}`);
    if (!list.ok) throw new Error(`GET /orders answered ${list.status}`);
    const { items } = (await list.json()) as { items: { id: string }[] };
    const details = await Promise.all(
      items.map(
        async ({ id }) => (await (await fetchWithTimeout(`${ordersUrl}/orders/${id}`)).json()) as OrderView,
      ),
    );
    const traceIds = traceUrlTemplate
      ? await traceIdsOf(
          orders,
          items.map(({ id }) => id),
        )
      : new Map();
    return {
      orders: details.map((order) => {
        const traceId = traceIds.get(order.id);
        return traceId && traceUrlTemplate
          ? { ...order, traceUrl: traceUrlTemplate.replace('{traceId}', traceId) }
          : order;
      }),
    };
  } catch (err) {
    return { orders: [], error: errorMessage(err) };
  }
}

async function traceIdsOf(orders: Service, ids: string[]): Promise<Map<string, string>> {
  const { rows } = await orders.pool.query<{ aggregate_id: string; trace_id: string }>(traceIdsSql, [ids]);
  return new Map(rows.filter((row) => row.trace_id).map((row) => [row.aggregate_id, row.trace_id]));
}
