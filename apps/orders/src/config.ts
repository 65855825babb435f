import {
  host,
  inboxRetentionHours,
  kafkaBrokers,
  kafkaTopicSettings,
  logLevel,
  port,
  postgresUrl,
  topicPrefix,
} from '@outbox/runtime/config';
import { databaseTimeoutSettings, refineDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { z } from 'zod';
import { demoSettings, refineDemoSettings } from './demo/index.ts';

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
  ...kafkaTopicSettings,
  /** Consumer group for the replies; also this consumer's name in processed_events. */
  KAFKA_GROUP_ID: z.string().min(1).default('orders'),
  INBOX_RETENTION_HOURS: inboxRetentionHours,
  /**
   * The saga's timeout: an order still PENDING this long after it was placed is cancelled (and a
   * cancelled order whose stock or payment is still held this long after the decision gets its
   * ORDER_CANCELLED once more). See src/saga/sagaTimeout.ts.
   */
  SAGA_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(300_000),
  /** How often the orders process looks for timed-out orders. */
  SAGA_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).default(10_000),
  /** The test and demo switches (demo/index.ts): each refused unless OUTBOX_ALLOW_FAULTS allows it. */
  ...demoSettings,
});

export const configSchema = refineDemoSettings(refineDatabaseTimeouts(settings))
  // A sweep less often than the timeout would let orders overstay it by more than the timeout.
  .refine((config) => config.SAGA_SWEEP_INTERVAL_MS <= config.SAGA_TIMEOUT_MS, {
    path: ['SAGA_SWEEP_INTERVAL_MS'],
    message: 'must not be longer than SAGA_TIMEOUT_MS',
  });

export type Config = z.output<typeof configSchema>;
