// What the inventory app lends to the consumer benchmark (bench/consumer-throughput.ts), which
// drives the real handlers from a backlog without the service around them. The service itself
// starts from main.ts.
export { migrate } from './db.ts';
export { inventoryHandlers } from './handlers.ts';
export { EVENT_SOURCE } from './reserveStock.ts';
