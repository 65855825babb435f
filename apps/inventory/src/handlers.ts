import {
  ORDER_CANCELLED,
  ORDER_CREATED,
  type OrderCancelledV1,
  type OrderCreatedV1,
  type SqlExecutor,
} from '@outbox/events';
import type { BatchHandler, EffectHandler } from '@outbox/service/event-consumer';
import { releaseStock } from './releaseStock.ts';
import { reserveStocks } from './reserveStock.ts';

/** Inventory's handlers: ORDER_CREATED reserves (a chunk's orders together), ORDER_CANCELLED releases. */
export const inventoryHandlers: {
  [ORDER_CREATED]: BatchHandler<SqlExecutor>;
  [ORDER_CANCELLED]: EffectHandler<SqlExecutor>;
} = {
  [ORDER_CREATED]: {
    applyAll: (tx, events) =>
      reserveStocks(
        tx,
        events.map((event) => event.data as OrderCreatedV1),
      ),
  },
  [ORDER_CANCELLED]: (tx, event) => releaseStock(tx, event.data as OrderCancelledV1),
};
