// What the orders app lends to the write-path benchmark (bench/write-path.ts), which compares the
// real write (placeOrder) with its variants on one database. The service itself starts from main.ts.
export { createPrisma, migrate, type Prisma, type Tx } from './db.ts';
export { insertOrderAlone } from './demo/orderAlone.ts';
export { catalogPricesOf } from './orders/catalogPrices.ts';
export {
  type CreatedOrder,
  EVENT_SOURCE,
  insertOrderWithEvent,
  newOrder,
  orderCreated,
} from './orders/createOrder.ts';
export { requestHash } from './orders/idempotency.ts';
export type { OrderRequest } from './orders/orderRequest.ts';
export { placeOrder } from './orders/placeOrder.ts';
