import {
  ORDER_CANCELLED,
  ORDER_CREATED,
  type OrderCancelledV1,
  type OrderCreatedV1,
} from '@outbox/contracts';
import type { BatchHandler, EffectHandler } from '@outbox/inbox';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import { releaseStock } from './releaseStock.ts';
import { reserveStocks } from './reserveStock.ts';

/** Inventory's handlers: ORDER_CREATED reserves (a chunk's orders together), ORDER_CANCELLED releases. */
export const inventoryHandlers: {
  [ORDER_CREATED]: BatchHandler<SqlExecutor, OrderCreatedV1>;
  [ORDER_CANCELLED]: EffectHandler<SqlExecutor, OrderCancelledV1>;
} = {
  [ORDER_CREATED]: {
    applyAll: (tx, events) =>
      reserveStocks(
        tx,
        events.map((event) => event.data),
      ),
  },
  [ORDER_CANCELLED]: (tx, event) => releaseStock(tx, event.data),
};
