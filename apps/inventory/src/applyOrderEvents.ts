import {
  type EventEnvelope,
  ORDER_CREATED,
  type OrderCancelledV1,
  type OrderCreatedV1,
} from '@outbox/contracts';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';
import { releaseReservation } from './releaseStock.ts';
import { type Decision, reserveStocks } from './reserveStock.ts';

type Created = EventEnvelope<OrderCreatedV1>;
/** What inventory consumes: an order's ORDER_CREATED and ORDER_CANCELLED, one handler for both. */
export type OrderEvent = Created | EventEnvelope<OrderCancelledV1>;

const isCreated = (event: OrderEvent): event is Created => event.type === ORDER_CREATED;

// Every stock row the run will touch, in ONE statement, in SKU order: the lines of its creates and
// what its cancels will return (their reservations' items; an order created earlier in the run
// has its SKUs among the creates' lines).
const lockStockOfRun = `
  select sku from stock
   where sku in (select unnest($1::text[])
                 union
                 select sku from reservation_items where order_id = any($2::uuid[]))
   order by sku
     for update`;

/**
 * A run of ORDER_CREATED and ORDER_CANCELLED events in offset order, in the consumer's chunk
 * transaction (the consumer hands one handler's consecutive events over as one run: here, the
 * chunk): consecutive creates reserved together (reserveStocks), each cancel released
 * (releaseReservation), and one decision per event.
 *
 * Why this never deadlocks: the transaction locks every stock row it will touch in its FIRST
 * stock statement, in SKU order, and later statements only touch rows it already holds. So
 * transactions of chunks on other partitions take stock locks in one global order (SKU order,
 * once). Locking per statement instead (a release's SKUs, then a reservation's) let a chunk hold
 * SKU b while waiting for a, and another hold a while waiting for b: SQLSTATE 40P01.
 */
export async function applyOrderEvents(tx: SqlExecutor, events: OrderEvent[]): Promise<Decision<string>[]> {
  const lines = events.filter(isCreated).flatMap((event) => event.data.items.map((item) => item.sku));
  const cancelled = events.filter((event) => !isCreated(event)).map((event) => event.data.orderId);
  await queryRows(tx, lockStockOfRun, [[...new Set(lines)], cancelled]);

  const decisions: Decision<string>[] = [];
  for (let start = 0; start < events.length; ) {
    const event = events[start] as OrderEvent;
    if (!isCreated(event)) {
      decisions.push(await releaseReservation(tx, event.data));
      start += 1;
      continue;
    }
    let end = start;
    while (end < events.length && isCreated(events[end] as OrderEvent)) end += 1;
    const creates = events.slice(start, end) as Created[];
    decisions.push(
      ...(await reserveStocks(
        tx,
        creates.map((created) => created.data),
      )),
    );
    start = end;
  }
  return decisions;
}
