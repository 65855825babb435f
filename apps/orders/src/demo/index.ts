import { WRITE_MODES } from '@outbox/contracts';
import {
  type ConsumerFaultSwitches,
  consumerFaultSettings,
  consumerFaultSwitches,
  consumerFaults,
} from '@outbox/inbox';
import {
  allowFaults,
  type FaultSwitches,
  refuseFaultsUnlessAllowed,
  topicLayout,
} from '@outbox/runtime/config';
import { type KafkaSecuritySettings, kafkaSecurity } from '@outbox/runtime/kafka-security';
import type { Router } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Prisma } from '../db.ts';
import type { OrderBatches } from '../orders/orderBatches.ts';
import { NaivePublisher } from './naivePublisher.ts';
import { OrderWriter } from './orderWriter.ts';
import { writeModeRouter } from './writeModeRouter.ts';

// The orders service's test and demo switches, in one place: the naive write modes and the demo's
// switch between them, the fault points of the chaos suite, and a reply consumer without dedup.
// config.ts validates them with the rest; main.ts hands what they ask for to the app and the
// consumer at start-up. Production sets none (each is refused unless OUTBOX_ALLOW_FAULTS allows
// it), so there POST /orders is placeOrder and nothing else.

export const demoSettings = {
  ...allowFaults,
  /**
   * How POST /orders gets ORDER_CREATED to Kafka. `outbox` (the default, and the only mode
   * production takes): in the order's transaction, for the relay. The two naive dual writes exist
   * to be broken on purpose in the local demo and the chaos suite (orderWriter.ts).
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
  ...consumerFaultSettings,
  /**
   * Test-only broken build: `off` applies a redelivered reply again instead of skipping it, so the
   * chaos suite can prove its checker catches it.
   */
  INBOX_DEDUP: z.enum(['on', 'off']).default('on'),
};

type DemoConfig = z.output<z.ZodObject<typeof demoSettings>>;

const demoSwitches: FaultSwitches<DemoConfig> = {
  ...consumerFaultSwitches,
  WRITE_MODE: (config) => config.WRITE_MODE !== 'outbox',
  WRITE_MODES_SWITCHABLE: (config) => config.WRITE_MODES_SWITCHABLE,
  FAULT_KILL_BETWEEN_WRITES_AT: (config) => config.FAULT_KILL_BETWEEN_WRITES_AT > 0,
  FAULT_FAIL_COMMIT_EVERY: (config) => config.FAULT_FAIL_COMMIT_EVERY > 0,
  INBOX_DEDUP: (config) => config.INBOX_DEDUP === 'off',
};

/** The config schema's rules for demoSettings: each switch refused unless allowed; the switch's token. */
export function refineDemoSettings<S extends z.ZodType<DemoConfig & { NODE_ENV?: string | undefined }>>(
  schema: S,
) {
  return refuseFaultsUnlessAllowed(schema, demoSwitches).refine(
    (config) => !(config.WRITE_MODES_SWITCHABLE && config.ORDERS_ADMIN_TOKEN === undefined),
    {
      path: ['ORDERS_ADMIN_TOKEN'],
      message: 'is required with WRITE_MODES_SWITCHABLE=true (it guards PUT /admin/write-mode)',
    },
  );
}

/** The saga reply consumer's hooks: the kill switches, and INBOX_DEDUP=off. */
export function replyConsumerFaults(config: DemoConfig): ConsumerFaultSwitches {
  return { ...consumerFaults(config), ...(config.INBOX_DEDUP === 'off' ? { inboxDedup: false } : {}) };
}

export type OrdersDemo = {
  writer: OrderWriter;
  /** PUT /admin/write-mode, with WRITE_MODES_SWITCHABLE. */
  admin?: Router;
  stop(): Promise<void>;
};

type KafkaConfig = KafkaSecuritySettings & {
  KAFKA_BROKERS: string[];
  KAFKA_TOPIC_PREFIX: string;
  KAFKA_TOPIC_PARTITIONS: number;
  KAFKA_REPLICATION_FACTOR: number;
};

/** The order writer the switches of `config` ask for; none (production: placeOrder) without any. */
export function startOrdersDemo(
  config: DemoConfig & KafkaConfig,
  { prisma, logger, batches }: { prisma: Prisma; logger: Logger; batches: OrderBatches },
): OrdersDemo | undefined {
  const naive = config.WRITE_MODE !== 'outbox' || config.WRITE_MODES_SWITCHABLE;
  const faults = {
    killBetweenWritesAt: config.FAULT_KILL_BETWEEN_WRITES_AT,
    failCommitEvery: config.FAULT_FAIL_COMMIT_EVERY,
  };
  if (!naive && !faults.killBetweenWritesAt && !faults.failCommitEvery) return undefined;
  // The naive modes send ORDER_CREATED from the request, so they need a producer here.
  const publisher = naive
    ? new NaivePublisher({
        brokers: config.KAFKA_BROKERS,
        security: kafkaSecurity(config),
        topicPrefix: config.KAFKA_TOPIC_PREFIX,
        topicLayout: topicLayout(config),
        logger,
      })
    : undefined;
  const writer = new OrderWriter({
    prisma,
    batches,
    mode: config.WRITE_MODE,
    ...(publisher ? { publisher } : {}),
    faults,
    logger,
  });
  if (config.WRITE_MODE !== 'outbox')
    logger.warn({ mode: config.WRITE_MODE }, 'naive write mode: events can be lost or invented');
  const admin =
    config.WRITE_MODES_SWITCHABLE && config.ORDERS_ADMIN_TOKEN
      ? writeModeRouter(writer, config.ORDERS_ADMIN_TOKEN, logger)
      : undefined;
  return { writer, ...(admin ? { admin } : {}), stop: async () => publisher?.disconnect() };
}
