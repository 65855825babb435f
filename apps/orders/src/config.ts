import {
  host,
  inboxRetentionHours,
  kafkaBrokers,
  kafkaChunkLingerMs,
  kafkaClient,
  kafkaCommitIntervalMs,
  kafkaGroupProtocol,
  kafkaSessionTimeoutMs,
  kafkaTopicSettings,
  logLevel,
  port,
  postgresUrl,
  refineKafkaGroupProtocol,
  standbySettings,
  timerMs,
  topicPrefix,
} from '@outbox/runtime/config';
import { databaseTimeoutSettings, refineDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { kafkaSecuritySettings, refineKafkaSecurity } from '@outbox/runtime/kafka-security';
import { z } from 'zod';
import { demoSettings, refineDemoSettings } from './demo/index.ts';
import type { AdmissionOptions } from './http/admission.ts';
import type { OrderBatchOptions } from './orders/orderBatches.ts';

/**
 * Connections of the pool kept out of the admission limit's reach: /healthz, the saga's timeout
 * sweep and the key retention still get one while every admitted request holds its own.
 */
const RESERVED_CONNECTIONS = 2;

const settings = z.object({
  NODE_ENV: z.string().optional(),
  PORT: port(3001),
  /** Loopback by default (the local demo); docker-compose sets 0.0.0.0. */
  HOST: host('127.0.0.1'),
  DATABASE_URL: postgresUrl,
  ...databaseTimeoutSettings,
  /**
   * The API's connection pool: node-postgres' `max` under Prisma, and by default the admission
   * limit's ceiling less the 2 kept. 22: 20 requests at once. Admitted orders do not hold a
   * connection each (at most ORDER_WRITE_CONCURRENCY transactions write them), but their batches
   * are drawn from those admitted: too few slots and the batches stay small past capacity, too
   * many and every order waits longer (docs/performance.md, "On an Intel host").
   */
  DATABASE_POOL_SIZE: z.coerce
    .number()
    .int()
    .min(RESERVED_CONNECTIONS + 1)
    .default(22),
  /**
   * How many requests (POST /orders, GET /orders, GET /orders/:id) do their database work at once
   * (http/admission.ts). `adaptive` (default): a limit that follows the latency of that work and
   * the saga's backlog (http/adaptiveLimit.ts), with a queue that admits a request only when it
   * should get a slot soon and refuses it on arrival otherwise. `fixed`: ADMISSION_LIMIT slots and
   * a short queue whose wait runs out after ADMISSION_QUEUE_TIMEOUT_MS. docs/production.md, "Overload".
   */
  ADMISSION_LIMITER: z.enum(['adaptive', 'fixed']).default('adaptive'),
  /**
   * The limit (fixed), or the most the adaptive limit grows to. Default: the pool size less the
   * connections kept for /healthz and the background work.
   */
  ADMISSION_LIMIT: z.coerce.number().int().positive().optional(),
  /**
   * The fewest requests the adaptive limit admits at once, however far behind the saga is. Default:
   * half the limit, so its cuts can at most halve what the API takes at once (at 2, a starved
   * machine's cuts and the queue's expected wait together refused nearly every order:
   * docs/performance.md, "It can collapse").
   */
  ADMISSION_MIN_LIMIT: z.coerce.number().int().positive().optional(),
  /** Requests waiting for an admission slot at most (default 16 fixed, 256 adaptive); 0: no queue. */
  ADMISSION_QUEUE_LENGTH: z.coerce.number().int().min(0).optional(),
  /**
   * The longest a request waits in that queue before it is refused (default 25 ms fixed; adaptive:
   * 500 ms, twice the expected wait it was queued for: a stall rather than a pause).
   */
  ADMISSION_QUEUE_TIMEOUT_MS: z.coerce.number().int().min(0).max(1_000).optional(),
  /** Adaptive: a request that finds every slot taken is queued only if its expected wait is within this. */
  ADMISSION_EXPECTED_WAIT_MS: z.coerce.number().int().min(0).max(1_000).default(250),
  /**
   * Adaptive: the saga's oldest undecided order (past ten stragglers) may be this old before the
   * limit shrinks; the API then takes orders at the pace the relays and consumers decide them.
   */
  ADMISSION_SAGA_BACKLOG_MS: timerMs(50).default(1_000),
  /** The Retry-After of a refused request. */
  ADMISSION_RETRY_AFTER_SECONDS: z.coerce.number().int().min(1).default(1),
  /**
   * Orders written in one transaction at most (orders/orderBatches.ts): the orders that arrive while
   * every writing transaction is busy are written together by the next. 1: every order alone.
   */
  ORDER_WRITE_BATCH_MAX: z.coerce.number().int().min(1).max(100).default(16),
  /**
   * Transactions writing orders at once, each on one pooled connection. Two: one commits while the
   * next batch gathers; more spread the same orders over smaller batches (docs/performance.md).
   */
  ORDER_WRITE_CONCURRENCY: z.coerce.number().int().min(1).default(2),
  /**
   * How long an order waits for others to share its transaction when a slot is free (at low rates,
   * where it would commit alone): fewer transactions per order for that much latency on its answer.
   * 0 writes it at once.
   */
  ORDER_WRITE_LINGER_MS: z.coerce.number().int().min(0).max(1_000).default(20),
  /**
   * Idempotency keys are kept this long, then deleted (a retry after that creates a new order);
   * 0 keeps them for ever. 24 h, like Stripe's keys: retries come within minutes, not days.
   */
  IDEMPOTENCY_KEY_RETENTION_HOURS: z.coerce.number().min(0).default(24),
  LOG_LEVEL: logLevel,
  /** Apply pending SQL migrations before listening (idempotent; guarded by an advisory lock). */
  MIGRATE_ON_START: z.stringbool().default(true),
  /** The saga's replies (reservation.events, payment.events) are consumed from here. */
  KAFKA_BROKERS: kafkaBrokers,
  KAFKA_TOPIC_PREFIX: topicPrefix,
  KAFKA_CLIENT: kafkaClient,
  KAFKA_GROUP_PROTOCOL: kafkaGroupProtocol,
  ...kafkaTopicSettings,
  ...kafkaSecuritySettings,
  /** Consumer group for the replies; also this consumer's name in processed_events. */
  KAFKA_GROUP_ID: z.string().min(1).default('orders'),
  KAFKA_COMMIT_INTERVAL_MS: kafkaCommitIntervalMs,
  KAFKA_SESSION_TIMEOUT_MS: kafkaSessionTimeoutMs,
  /** The replies of inventory and billing that arrive within this many ms are applied in one transaction. */
  KAFKA_CHUNK_LINGER_MS: kafkaChunkLingerMs,
  INBOX_RETENTION_HOURS: inboxRetentionHours,
  ...standbySettings,
  /**
   * The saga's timeout: an order still PENDING this long after it was placed is cancelled (and a
   * cancelled order whose stock or payment is still held this long after the decision gets its
   * ORDER_CANCELLED once more). See src/saga/sagaTimeout.ts.
   */
  SAGA_TIMEOUT_MS: timerMs(1_000).default(300_000),
  /** How often the orders process looks for timed-out orders. */
  SAGA_SWEEP_INTERVAL_MS: timerMs(100).default(10_000),
  /** The test and demo switches (demo/index.ts): each refused unless OUTBOX_ALLOW_FAULTS allows it. */
  ...demoSettings,
});

export const configSchema = refineKafkaGroupProtocol(
  refineKafkaSecurity(refineDemoSettings(refineDatabaseTimeouts(settings))),
)
  // An admitted request holds a pooled connection: more slots than connections would queue the
  // extra requests on the pool, for seconds, instead of refusing them at once.
  .refine(
    (config) =>
      config.ADMISSION_LIMIT === undefined ||
      config.ADMISSION_LIMIT <= config.DATABASE_POOL_SIZE - RESERVED_CONNECTIONS,
    {
      path: ['ADMISSION_LIMIT'],
      message: `must leave ${RESERVED_CONNECTIONS} connections of DATABASE_POOL_SIZE free (for /healthz and background work)`,
    },
  )
  .refine(
    (config) =>
      config.ADMISSION_MIN_LIMIT === undefined ||
      config.ADMISSION_MIN_LIMIT <=
        (config.ADMISSION_LIMIT ?? config.DATABASE_POOL_SIZE - RESERVED_CONNECTIONS),
    { path: ['ADMISSION_MIN_LIMIT'], message: 'must not be above ADMISSION_LIMIT (or the pool size less 2)' },
  )
  // A sweep less often than the timeout would let orders overstay it by more than the timeout.
  .refine((config) => config.SAGA_SWEEP_INTERVAL_MS <= config.SAGA_TIMEOUT_MS, {
    path: ['SAGA_SWEEP_INTERVAL_MS'],
    message: 'must not be longer than SAGA_TIMEOUT_MS',
  });

export type Config = z.output<typeof configSchema>;

const admissionSettings = settings.pick({
  DATABASE_POOL_SIZE: true,
  ADMISSION_LIMITER: true,
  ADMISSION_LIMIT: true,
  ADMISSION_MIN_LIMIT: true,
  ADMISSION_QUEUE_LENGTH: true,
  ADMISSION_QUEUE_TIMEOUT_MS: true,
  ADMISSION_EXPECTED_WAIT_MS: true,
  ADMISSION_SAGA_BACKLOG_MS: true,
  ADMISSION_RETRY_AFTER_SECONDS: true,
});

/** The queue's defaults by limiter: the adaptive queue refuses long expected waits on arrival. */
const QUEUE_DEFAULTS = {
  fixed: { length: 16, timeoutMs: 25 },
  adaptive: { length: 256, timeoutMs: 500 },
};

/** The admission limit and its queue, as the config asks (the limit sized from the pool by default). */
export function admissionOptions(config: z.output<typeof admissionSettings>): AdmissionOptions {
  const queue = QUEUE_DEFAULTS[config.ADMISSION_LIMITER];
  const limit = config.ADMISSION_LIMIT ?? config.DATABASE_POOL_SIZE - RESERVED_CONNECTIONS;
  return {
    limit,
    queueLength: config.ADMISSION_QUEUE_LENGTH ?? queue.length,
    queueTimeoutMs: config.ADMISSION_QUEUE_TIMEOUT_MS ?? queue.timeoutMs,
    retryAfterSeconds: config.ADMISSION_RETRY_AFTER_SECONDS,
    ...(config.ADMISSION_LIMITER === 'adaptive'
      ? {
          adaptive: {
            minLimit: config.ADMISSION_MIN_LIMIT ?? Math.ceil(limit / 2),
            expectedWaitMs: config.ADMISSION_EXPECTED_WAIT_MS,
            sagaBacklogMs: config.ADMISSION_SAGA_BACKLOG_MS,
          },
        }
      : {}),
  };
}

const orderBatchSettings = settings.pick({
  ORDER_WRITE_BATCH_MAX: true,
  ORDER_WRITE_CONCURRENCY: true,
  ORDER_WRITE_LINGER_MS: true,
});

/** How POST /orders groups the orders that wait into transactions (orders/orderBatches.ts). */
export function orderBatchOptions(config: z.output<typeof orderBatchSettings>): OrderBatchOptions {
  return {
    maxBatch: config.ORDER_WRITE_BATCH_MAX,
    concurrency: config.ORDER_WRITE_CONCURRENCY,
    lingerMs: config.ORDER_WRITE_LINGER_MS,
  };
}

const defaults = admissionSettings.parse({});

/** The pool and the admission limit with every default: what createApp and the tests use when not told. */
export const defaultPoolSize = defaults.DATABASE_POOL_SIZE;
export const defaultAdmission: AdmissionOptions = admissionOptions(defaults);
export const defaultOrderBatches: OrderBatchOptions = orderBatchOptions(orderBatchSettings.parse({}));
