// Tracing, off unless OTEL_* variables turn it on (docs/tracing.md). Start the app with
// `node --import @outbox/runtime/tracing-register` so http, express and pg are traced too.
import '@outbox/runtime/tracing-register';
import { startConsumerService } from '@outbox/inbox';
import { onShutdown } from '@outbox/runtime/shutdown';
import { shutdownTracing } from '@outbox/runtime/tracing';
import { createApp, listen, outboxWriter } from './app.ts';
import { admissionOptions, configSchema, orderBatchOptions } from './config.ts';
import { createPrisma, migrate } from './db.ts';
import { replyConsumerFaults, startOrdersDemo } from './demo/index.ts';
import { EVENT_SOURCE } from './orders/createOrder.ts';
import { startIdempotencyKeyRetention } from './orders/idempotencyRetention.ts';
import { OrderBatches } from './orders/orderBatches.ts';
import { replyHandlers } from './saga/replyHandlers.ts';
import { startSagaBacklog } from './saga/sagaBacklog.ts';
import { startSagaTimeout } from './saga/sagaTimeout.ts';

// Orders starts the parts every consumer service has (config, migrations, the pool and the saga's
// reply consumer) as inventory and billing do, but not runConsumerService: its HTTP API serves
// /healthz and /metrics instead of an ops server, and on shutdown the API stops taking requests
// before anything else closes. The consumer starts in the background and retries while Kafka is
// away: the API takes orders whether or not Kafka is reachable (that is the outbox's point).
const {
  config,
  logger,
  pool,
  registry,
  consumer: replies,
} = await startConsumerService({
  name: 'orders',
  configSchema,
  migrate,
  source: EVENT_SOURCE,
  aggregateTypes: ['reservation', 'payment'],
  handlers: () => replyHandlers,
  // The chaos suite's kill switches and broken dedup (src/demo/), when allowed; none in production.
  faults: replyConsumerFaults,
});

// The API writes through Prisma (an order and its event in one interactive transaction); the
// reply consumer applies its chunks on the pool above (docs/design.md, "Consumers in chunks").
const prisma = createPrisma(config.DATABASE_URL, config, config.DATABASE_POOL_SIZE);

const sagaTimeout = startSagaTimeout({
  prisma,
  logger,
  registry,
  timeoutMs: config.SAGA_TIMEOUT_MS,
  intervalMs: config.SAGA_SWEEP_INTERVAL_MS,
});

// POST /orders writes each order with its event, the orders that wait for a transaction grouped into
// one (orders/orderBatches.ts). The demo's naive write modes and the chaos suite's fault points,
// when their switches are on and allowed (src/demo/), write their own way; production has none.
const batches = new OrderBatches(prisma, orderBatchOptions(config));
const demo = startOrdersDemo(config, { prisma, logger, batches });

// The adaptive admission limit shrinks when the saga falls behind: its backlog, read a few times a second.
const admission = admissionOptions(config);
const sagaBacklog = admission.adaptive ? startSagaBacklog({ prisma, logger }) : undefined;

const app = createApp({
  prisma,
  logger,
  registry,
  replies: () => replies.health(),
  admission,
  ...(sagaBacklog ? { sagaBacklog } : {}),
  writer: demo?.writer ?? outboxWriter(batches),
  ...(demo?.admin ? { admin: demo.admin } : {}),
});
const server = await listen(app, config.PORT, config.HOST);
logger.info({ host: config.HOST, port: config.PORT }, 'orders API listening');
const retention = startIdempotencyKeyRetention({
  prisma,
  logger,
  retentionHours: config.IDEMPOTENCY_KEY_RETENTION_HOURS,
});

onShutdown(logger, async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await retention.stop();
  await sagaBacklog?.stop();
  await replies.stop();
  await demo?.stop();
  await sagaTimeout.stop();
  await prisma.$disconnect();
  await pool.end();
  await shutdownTracing(); // last: export the spans of the shutdown too
});
