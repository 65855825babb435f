// Tracing, off unless OTEL_* variables turn it on (docs/tracing.md). Start the app with
// `node --import @outbox/runtime/tracing-register` so http, express and pg are traced too.
import '@outbox/runtime/tracing-register';
import { consumerFaults, runConsumerService } from '@outbox/inbox';
import { configSchema } from './config.ts';
import { migrate } from './db.ts';
import { inventoryHandlers } from './handlers.ts';
import { EVENT_SOURCE } from './reserveStock.ts';

await runConsumerService({
  name: 'inventory',
  configSchema,
  migrate,
  source: EVENT_SOURCE,
  aggregateTypes: ['order'],
  // The chaos suite's kill switches, when its config allows them; none in production.
  faults: consumerFaults,
  handlers: () => inventoryHandlers,
});
