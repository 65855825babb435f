export {
  fromKafkaMessage,
  type KafkaHeaders,
  type KafkaRecord,
  MalformedEventError,
  toKafkaMessage,
} from './cloudEvents.ts';
export { type CatalogProduct, DEMO_CATALOG } from './demoCatalog.ts';
export type { EventEnvelope, NewEvent } from './envelope.ts';
export { columnOf, EVENT_HEADERS, type EventHeader } from './eventHeaders.ts';
export {
  type NewEventOf,
  orderCancelled,
  orderConfirmed,
  orderCreated,
  paymentAuthorized,
  paymentDeclined,
  paymentVoided,
  stockRejected,
  stockReleased,
  stockReserved,
} from './factories.ts';
export {
  type EventJsonSchema,
  eventJsonSchemas,
  jsonSchemaName,
  toEventJsonSchema,
} from './jsonSchema.ts';
export { ORDER_CREATED, type OrderCreatedV1, orderCreatedV1 } from './orderCreated.ts';
export {
  ORDER_CANCELLED,
  ORDER_CONFIRMED,
  type OrderCancelledV1,
  type OrderConfirmedV1,
  orderCancelledV1,
  orderConfirmedV1,
} from './orderSaga.ts';
export {
  PAYMENT_AUTHORIZED,
  PAYMENT_DECLINED,
  PAYMENT_VOIDED,
  type PaymentAuthorizedV1,
  type PaymentDeclinedV1,
  type PaymentVoidedV1,
  paymentAuthorizedV1,
  paymentDeclinedV1,
  paymentVoidedV1,
} from './payment.ts';
export {
  type EventData,
  type EventInput,
  type EventOf,
  type EventType,
  type EventVersion,
  eventSchemas,
  schemaFor,
} from './registry.ts';
export {
  STOCK_REJECTED,
  STOCK_RELEASED,
  STOCK_RESERVED,
  type StockRejectedV1,
  type StockReleasedV1,
  type StockReservedV1,
  stockRejectedV1,
  stockReleasedV1,
  stockReservedV1,
} from './stock.ts';
export { topicFor } from './topics.ts';
export { WRITE_MODES, type WriteMode } from './writeModes.ts';
