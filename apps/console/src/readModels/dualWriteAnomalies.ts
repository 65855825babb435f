import type { Service } from '../services.ts';
import type { GhostOrderView } from '../shared/apiTypes.ts';

/**
 * How long a PENDING order may go unanswered before the console calls it lost. The saga normally
 * answers in well under a second; a broker outage with the outbox keeps the ORDER_CREATED row, so
 * it is never mistaken for a lost one however long the outage lasts.
 */
const LOST_AFTER_MS = 10_000;
/** A reservation or payment this recent may be for an order whose transaction has not committed yet. */
const GHOST_AFTER_MS = 3_000;
const RECENT = 20;

/** Looked up by outbox_aggregate_id_idx, as the orders list's trace ids are (orders.ts). */
export const withOrderCreatedSql = `
  select aggregate_id from outbox
   where aggregate_type = 'order' and event_type = 'ORDER_CREATED' and aggregate_id = any($1::text[])`;

const recentReservations = `
  select order_id::text, status, created_at from reservations
   where created_at < now() - make_interval(secs => $1::int / 1000.0)
   order by created_at desc limit $2::int`;
const recentPayments = `
  select order_id::text, status, created_at from payments
   where created_at < now() - make_interval(secs => $1::int / 1000.0)
   order by created_at desc limit $2::int`;

/**
 * The listed orders that look lost: PENDING for LOST_AFTER_MS, and no trace of ORDER_CREATED
 * anywhere: no outbox row (the event was never queued) and no reservation or payment (it never
 * reached inventory or billing). A commit-then-publish whose send failed leaves exactly that.
 */
export async function lostOrders(
  pending: { id: string; createdAt: string }[],
  services: { orders: Service; inventory: Service; billing: Service },
): Promise<Set<string>> {
  const ids = pending
    .filter((order) => Date.now() - Date.parse(order.createdAt) > LOST_AFTER_MS)
    .map((o) => o.id);
  if (ids.length === 0) return new Set();
  const [queued, reserved, paid] = await Promise.all([
    services.orders.pool.query<{ aggregate_id: string }>(withOrderCreatedSql, [ids]),
    services.inventory.pool.query<{ order_id: string }>(
      'select order_id::text from reservations where order_id = any($1::uuid[])',
      [ids],
    ),
    services.billing.pool.query<{ order_id: string }>(
      'select order_id::text from payments where order_id = any($1::uuid[])',
      [ids],
    ),
  ]);
  const seen = new Set([
    ...queued.rows.map((row) => row.aggregate_id),
    ...reserved.rows.map((row) => row.order_id),
    ...paid.rows.map((row) => row.order_id),
  ]);
  return new Set(ids.filter((id) => !seen.has(id)));
}

/**
 * The newest reservations and payments whose order the orders database does not have: what
 * inventory and billing did for an ORDER_CREATED whose transaction never committed.
 */
export async function ghostOrders(services: {
  orders: Service;
  inventory: Service;
  billing: Service;
}): Promise<GhostOrderView[]> {
  type Row = { order_id: string; status: string; created_at: Date };
  const [reservations, payments] = await Promise.all([
    services.inventory.pool.query<Row>(recentReservations, [GHOST_AFTER_MS, RECENT]),
    services.billing.pool.query<Row>(recentPayments, [GHOST_AFTER_MS, RECENT]),
  ]);
  const ghosts = new Map<string, GhostOrderView>();
  for (const row of [...reservations.rows, ...payments.rows]) {
    const ghost = ghosts.get(row.order_id) ?? {
      id: row.order_id,
      reservation: null,
      payment: null,
      at: row.created_at.toISOString(),
    };
    if (reservations.rows.includes(row)) ghost.reservation = row.status;
    else ghost.payment = row.status;
    ghosts.set(row.order_id, ghost);
  }
  if (ghosts.size === 0) return [];
  const { rows } = await services.orders.pool.query<{ id: string }>(
    'select id::text from orders where id = any($1::uuid[])',
    [[...ghosts.keys()]],
  );
  for (const { id } of rows) ghosts.delete(id);
  return [...ghosts.values()].sort((a, b) => b.at.localeCompare(a.at));
}
