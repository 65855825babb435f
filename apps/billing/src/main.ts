// Tracing, off unless OTEL_* variables turn it on (docs/tracing.md). Start the app with
// `node --import @outbox/runtime/tracing-register` so http, express and pg are traced too.
import '@outbox/runtime/tracing-register';
import { consumerFaults, runConsumerService } from '@outbox/inbox';
import { EVENT_SOURCE } from './authorizePayment.ts';
import { configSchema } from './config.ts';
import { migrate } from './db.ts';
import { billingHandlers } from './handlers.ts';
import { PaymentProvider, seededDraws } from './paymentProvider.ts';

await runConsumerService({
  name: 'billing',
  configSchema,
  migrate,
  source: EVENT_SOURCE,
  aggregateTypes: ['order'],
  // The chaos suite's kill switches, when its config allows them; none in production.
  faults: consumerFaults,
  handlers: ({ config, pool }) =>
    billingHandlers(
      pool,
      new PaymentProvider({
        limitCents: config.PAYMENT_LIMIT_CENTS,
        faultRate: config.PAYMENT_FAULT_RATE,
        ...(config.PAYMENT_FAULT_SEED === undefined ? {} : { draw: seededDraws(config.PAYMENT_FAULT_SEED) }),
        latencyMs: config.PAYMENT_LATENCY_MS,
        timeoutMs: config.PAYMENT_TIMEOUT_MS,
        remember: config.PAYMENT_KEYS_REMEMBERED,
      }),
    ),
});
