import {
  ORDER_CANCELLED,
  ORDER_CREATED,
  type OrderCancelledV1,
  type OrderCreatedV1,
} from '@outbox/contracts';
import type { BatchHandler } from '@outbox/inbox';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import { applyOrderEvents, type OrderEvent } from './applyOrderEvents.ts';

export type InventoryHandler = BatchHandler<SqlExecutor, OrderCreatedV1 | OrderCancelledV1>;

/**
 * Inventory's handler, ONE for ORDER_CREATED (reserve) and ORDER_CANCELLED (release): the consumer
 * hands one handler's consecutive events to it as one run, so a chunk's creates and cancels are
 * applied together, and the chunk's stock rows locked once, in one order (applyOrderEvents).
 */
const handler: InventoryHandler = {
  applyAll: (tx, events) => applyOrderEvents(tx, events as OrderEvent[]),
};

export const inventoryHandlers: { [ORDER_CREATED]: InventoryHandler; [ORDER_CANCELLED]: InventoryHandler } = {
  [ORDER_CREATED]: handler,
  [ORDER_CANCELLED]: handler,
};
