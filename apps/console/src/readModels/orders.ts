import { parseTraceparent } from '@outbox/runtime/traceparent';
import { errorMessage, fetchWithTimeout, type Service } from '../services.ts';
import type { OrdersResponse, OrderView } from '../shared/apiTypes.ts';
import { ghostOrders, lostOrders } from './dualWriteAnomalies.ts';

const RECENT_ORDERS = 8;

/**
 * The trace context of each order's ORDER_CREATED, which `writeEvent` stored in the outbox row
 * (W3C traceparent `00-<trace id>-<span id>-<flags>`: the flags say whether it was sampled).
 * Published rows are deleted after the relay's retention, so older orders have none. A few orders,
 * looked up by outbox_aggregate_id_idx: the read costs the same whatever the size of the outbox.
 */
export const traceparentsSql = `
  select aggregate_id, headers->>'traceparent' as traceparent
    from outbox
   where aggregate_type = 'order' and event_type = 'ORDER_CREATED'
     and aggregate_id = any($1::text[]) and headers ? 'traceparent'`;

/**
 * The newest orders with their saga progress, as the orders API reports them: the list for the
 * order of things, then each order for its history (the replies it received, in order). Orders
 * that look lost are marked, and ghosts (effects for orders that do not exist) listed, with the
 * write mode orders runs in: what a naive dual write does (dualWriteAnomalies.ts).
 */
export async function ordersView(
  ordersUrl: string,
  services: { orders: Service; inventory: Service; billing: Service },
  traceUrlTemplate: string | undefined,
  { dualWriteAnomalies = false }: { dualWriteAnomalies?: boolean } = {},
): Promise<OrdersResponse> {
  const { orders } = services;
  try {
    const list = await fetchWithTimeout(`${ordersUrl}/orders?limit=${RECENT_ORDERS}`);
    if (!list.ok) throw new Error(`GET /orders answered ${list.status}`);
    const { items } = (await list.json()) as { items: { id: string }[] };
    const details = await Promise.all(
      items.map(
        async ({ id }) => (await (await fetchWithTimeout(`${ordersUrl}/orders/${id}`)).json()) as OrderView,
      ),
    );
    // Only where orders can run a naive write mode (the local demo): with the outbox alone there
    // is nothing to find, and the ghost search reads inventory's and billing's newest rows.
    const [lost, ghosts, writeMode] = await Promise.all([
      dualWriteAnomalies
        ? lostOrders(
            details.filter((order) => order.status === 'PENDING'),
            services,
          )
        : new Set<string>(),
      dualWriteAnomalies ? ghostOrders(services) : [],
      writeModeOf(ordersUrl),
    ]);
    const traces = traceUrlTemplate
      ? await tracesOf(
          orders,
          items.map(({ id }) => id),
        )
      : new Map();
    return {
      orders: details.map((order) => {
        const trace = traces.get(order.id);
        return {
          ...order,
          // An unsampled trace was recorded nowhere: no link to open an error page with.
          ...(trace?.sampled && traceUrlTemplate
            ? { traceUrl: traceUrlTemplate.replace('{traceId}', trace.traceId) }
            : {}),
          ...(trace && !trace.sampled ? { sampledOut: true as const } : {}),
          ...(lost.has(order.id) ? { lost: true as const } : {}),
        };
      }),
      ghosts,
      ...(writeMode ? { writeMode } : {}),
    };
  } catch (err) {
    return { orders: [], ghosts: [], error: errorMessage(err) };
  }
}

/** The write mode orders reports on its /healthz. */
async function writeModeOf(ordersUrl: string): Promise<string | undefined> {
  const res = await fetchWithTimeout(`${ordersUrl}/healthz`).catch(() => undefined);
  if (!res?.ok) return undefined;
  const body = (await res.json()) as { writeMode?: unknown };
  return typeof body.writeMode === 'string' ? body.writeMode : undefined;
}

async function tracesOf(
  orders: Service,
  ids: string[],
): Promise<Map<string, NonNullable<ReturnType<typeof parseTraceparent>>>> {
  const { rows } = await orders.pool.query<{ aggregate_id: string; traceparent: string }>(traceparentsSql, [
    ids,
  ]);
  return new Map(
    rows.flatMap((row) => {
      const trace = parseTraceparent(row.traceparent);
      return trace ? [[row.aggregate_id, trace] as const] : [];
    }),
  );
}
