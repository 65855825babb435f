// What the billing app lends to the consumer benchmark (bench/consumer-throughput.ts), which
// drives the real handlers from a backlog without the service around them. The service itself
// starts from main.ts.
export { EVENT_SOURCE } from './authorizePayment.ts';
export { migrate } from './db.ts';
export { billingHandlers } from './handlers.ts';
export { PaymentProvider } from './paymentProvider.ts';
