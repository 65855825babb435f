import { WRITE_MODES } from '@outbox/contracts';
import {
  host,
  inboxRetentionHours,
  kafkaBrokers,
  logLevel,
  port,
  positiveInt,
  postgresUrl,
  refuseKillAfterCommitInProduction,
  topicPrefix,
} from '@outbox/runtime/config';
import { databaseTimeoutSettings, refineDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { z } from 'zod';

const settings = z.object({
  NODE_ENV: z.string().optional(),
  PORT: port(3001),
  /** Loopback by default (the local demo); docker-compose sets 0.0.0.0. */
  HOST: host('127.0.0.1'),
  DATABASE_URL: postgresUrl,
  ...databaseTimeoutSettings,
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
  KAFKA_TOPIC_PARTITIONS: positiveInt(6),
  /** Consumer group for the replies; also this consumer's name in processed_events. */
  KAFKA_GROUP_ID: z.string().min(1).default('orders'),
  /** Test-only fault point: kill -9 the process after the first reply commits, before its offset does. */
  FAULT_KILL_AFTER_COMMIT: z.stringbool().default(false),
  /** Test-only fault point: kill -9 the process inside a chunk of replies, after ≥ 2 effects, before COMMIT. */
  FAULT_KILL_MID_CHUNK: z.stringbool().default(false),
  INBOX_RETENTION_HOURS: inboxRetentionHours,
  /**
   * Test-only broken build: `off` applies a redelivered reply again instead of skipping it (see
   * ApplyOnceOptions.dedup in packages/inbox), so the chaos suite can prove its checker catches it.
   */
  INBOX_DEDUP: z.enum(['on', 'off']).default('on'),
  /**
   * The saga's timeout: an order still PENDING this long after it was placed is cancelled (and a
   * cancelled order whose stock or payment is still held this long after the decision gets its
   * ORDER_CANCELLED once more). See src/saga/sagaTimeout.ts.
   */
  SAGA_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(300_000),
  /** How often the orders process looks for timed-out orders. */
  SAGA_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * How POST /orders gets ORDER_CREATED to Kafka. `outbox` (the default, and the only mode
   * production takes): in the order's transaction, for the relay. The two naive dual writes exist
   * to be broken on purpose in the local demo and the chaos suite (orders/writeModes.ts).
   */
  WRITE_MODE: z.enum(WRITE_MODES).default('outbox'),
  /**
   * Local demo only: PUT /admin/write-mode (with ORDERS_ADMIN_TOKEN) switches the write mode of
   * the running process, so the console can show the naive ways failing next to the outbox.
   */
  WRITE_MODES_SWITCHABLE: z.stringbool().default(false),
  ORDERS_ADMIN_TOKEN: z.string().min(16, 'use at least 16 characters').optional(),
  /** Test-only fault point: kill -9 the process at its n-th order, between the order's two writes (0: never). */
  FAULT_KILL_BETWEEN_WRITES_AT: z.coerce.number().int().min(0).default(0),
  /** Test-only fault point: every n-th order's transaction fails after its write, right before COMMIT (0: never). */
  FAULT_FAIL_COMMIT_EVERY: z.coerce.number().int().min(0).default(0),
});

const NAIVE = 'is a naive dual write kept for the demo and the chaos suite';
const FAULT_POINT = 'is a test-only fault point and is refused when NODE_ENV=production';

// A production process must never run with its duplicate detection switched off.
export const configSchema = refuseKillAfterCommitInProduction(refineDatabaseTimeouts(settings))
  .refine((config) => !(config.INBOX_DEDUP === 'off' && config.NODE_ENV === 'production'), {
    path: ['INBOX_DEDUP'],
    message: 'off is a test-only broken build and is refused when NODE_ENV=production',
  })
  // The naive write modes lose and invent events by design: nowhere near production, and neither is
  // the switch that turns them on, nor the fault points that show them failing.
  .refine((config) => !(config.WRITE_MODE !== 'outbox' && config.NODE_ENV === 'production'), {
    path: ['WRITE_MODE'],
    message: `${NAIVE} and is refused when NODE_ENV=production; use outbox`,
  })
  .refine((config) => !(config.WRITE_MODES_SWITCHABLE && config.NODE_ENV === 'production'), {
    path: ['WRITE_MODES_SWITCHABLE'],
    message: 'lets the demo switch to a naive dual write and is refused when NODE_ENV=production',
  })
  .refine((config) => !(config.WRITE_MODES_SWITCHABLE && config.ORDERS_ADMIN_TOKEN === undefined), {
    path: ['ORDERS_ADMIN_TOKEN'],
    message: 'is required with WRITE_MODES_SWITCHABLE=true (it guards PUT /admin/write-mode)',
  })
  .refine((config) => !(config.FAULT_KILL_BETWEEN_WRITES_AT > 0 && config.NODE_ENV === 'production'), {
    path: ['FAULT_KILL_BETWEEN_WRITES_AT'],
    message: FAULT_POINT,
  })
  .refine((config) => !(config.FAULT_FAIL_COMMIT_EVERY > 0 && config.NODE_ENV === 'production'), {
    path: ['FAULT_FAIL_COMMIT_EVERY'],
    message: FAULT_POINT,
  })
  // A sweep less often than the timeout would let orders overstay it by more than the timeout.
  .refine((config) => config.SAGA_SWEEP_INTERVAL_MS <= config.SAGA_TIMEOUT_MS, {
    path: ['SAGA_SWEEP_INTERVAL_MS'],
    message: 'must not be longer than SAGA_TIMEOUT_MS',
  });

export type Config = z.output<typeof configSchema>;
