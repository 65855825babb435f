import { z } from 'zod';
import { kafkaSecuritySettings } from './kafkaSecurity.ts';

/** Thrown when the environment does not match an app's config schema; names every bad variable. */
export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  readonly issues: readonly string[];

  constructor(service: string, issues: readonly string[]) {
    super(`${service}: invalid configuration\n${issues.map((line) => `  - ${line}`).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/**
 * Parse the environment once, at startup, into a typed config object.
 * Code below `main.ts` receives this object and never reads `process.env` itself.
 */
export function loadConfig<S extends z.ZodType>(
  service: string,
  schema: S,
  env: Record<string, string | undefined> = process.env,
): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    // The variable is the first path segment; deeper segments point inside a transformed value
    // (the third broker of KAFKA_BROKERS, say). The value itself is never shown: it may be a token
    // or a URL with a password, and this message goes to the logs.
    const variable = String(issue.path[0] ?? '(environment)');
    const unset = env[variable] === undefined ? ' (it is not set)' : '';
    return `${variable}: ${issue.message}${unset}`;
  });
  throw new ConfigError(service, issues);
}

/** For `main.ts`: print the config problems plainly (no stack trace) and exit with EX_CONFIG (78). */
export function loadConfigOrExit<S extends z.ZodType>(service: string, schema: S): z.output<S> {
  try {
    return loadConfig(service, schema);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(78);
  }
}

// Reusable field schemas, so that every app spells the same variable the same way.

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

/** The interface a server listens on: loopback by default, 0.0.0.0 only where a container needs it. */
export const host = (fallback: string) =>
  z
    .string()
    .regex(/^[0-9A-Za-z.:_-]+$/, 'expected an address such as 127.0.0.1, 0.0.0.0 or ::')
    .default(fallback);

export const postgresUrl = z
  .string({ error: 'expected a PostgreSQL URL such as postgresql://postgres@127.0.0.1:5432/orders' })
  .regex(/^postgres(ql)?:\/\/.+\/[^/]+$/, 'expected postgresql://user@host:port/database');

export const kafkaBrokers = z
  .string({ error: 'expected a comma-separated list of host:port, such as 127.0.0.1:9092' })
  .transform((value) => value.split(',').map((broker) => broker.trim()))
  .pipe(z.array(z.string().regex(/^[^:\s]+:\d+$/, 'each broker must be host:port')).min(1));

/**
 * The client library a process's producers, group member and admin calls go through: kafkajs (the
 * default) or @platformatic/kafka (maintained). Both pass the same failovers; docs/dependencies.md
 * says which is the default, and why.
 */
export const kafkaClient = z
  .enum(['kafkajs', 'platformatic'], { error: 'expected kafkajs or platformatic' })
  .default('kafkajs');

/**
 * How a consumer process's group member takes part in its group (KIP-848): `classic` (the
 * default), where every membership change stops the whole group while the members rejoin, or
 * `consumer`, where the broker assigns partitions itself, a few at a time, and a member keeps
 * fetching while its coordinator is away; its session timeout and heartbeat interval are then the
 * broker's (group.consumer.*, docs/production.md). Only @platformatic/kafka speaks it:
 * refineKafkaGroupProtocol refuses it with kafkajs. docs/dependencies.md compares the two.
 */
export const kafkaGroupProtocol = z
  .enum(['classic', 'consumer'], { error: 'expected classic or consumer' })
  .default('classic');

/** Refuse KAFKA_GROUP_PROTOCOL=consumer with a client that does not speak it (kafkajs). */
export function refineKafkaGroupProtocol<
  S extends z.ZodType<{
    KAFKA_CLIENT: 'kafkajs' | 'platformatic';
    KAFKA_GROUP_PROTOCOL: 'classic' | 'consumer';
  }>,
>(schema: S) {
  return schema.superRefine((config, context) => {
    if (config.KAFKA_GROUP_PROTOCOL === 'consumer' && config.KAFKA_CLIENT === 'kafkajs') {
      context.addIssue({
        code: 'custom',
        path: ['KAFKA_GROUP_PROTOCOL'],
        message: 'consumer needs KAFKA_CLIENT=platformatic: kafkajs speaks only the classic group protocol',
      });
    }
  });
}

export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .default('info');

export const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/**
 * The longest delay Node's setTimeout and setInterval take: a longer one fires after 1 ms (with a
 * TimeoutOverflowWarning), so a 30-day poll interval would poll every millisecond.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A whole number of milliseconds something waits, from `min` to MAX_TIMER_MS. */
export const timerMs = (min = 1) =>
  z.coerce
    .number()
    .int('a whole number of milliseconds')
    .min(min, `at least ${min} ms`)
    .max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (about 24.8 days): Node fires a longer timer at once`);

/** Topic names get this prefix, so tests and demos can share one broker without sharing topics. */
export const topicPrefix = z
  .string()
  .regex(/^[a-zA-Z0-9._-]*$/, 'only letters, digits, ".", "_" and "-"')
  .default('');

/**
 * How long a consumer remembers the events it applied (processed_events); 0 keeps them for ever.
 * 14 days: twice the topics' retention, far beyond any redelivery (docs/design.md, "Retention of processed_events").
 */
export const inboxRetentionHours = z.coerce
  .number()
  .int()
  .min(0)
  .default(14 * 24);

/**
 * How often a consumer commits its Kafka offsets; unset, the consumer loop's default (1 s,
 * packages/inbox/src/offsetCommits.ts). A crash redelivers at most this much of the stream, which
 * processed_events makes harmless (docs/design.md, "The consumers").
 */
export const kafkaCommitIntervalMs = timerMs().optional();

/**
 * The consumer group's session timeout (classic protocol): how long a member killed without
 * leaving holds its partitions and the group's rebalance (docs/production.md, "The consumer group
 * protocol"). At least three 3 s heartbeats, at most the broker's default maximum.
 */
export const kafkaSessionTimeoutMs = timerMs(9_000)
  .max(1_800_000, { error: "at most 1800000: the broker's default group.max.session.timeout.ms" })
  .default(30_000);

/**
 * How long a consumer waits from one transaction to the next while events trickle in: it applies
 * what a fetch brought at once, all partitions in one transaction, and fetches again no sooner
 * than this long after (packages/inbox/src/combinedChunks.ts); 0 applies each partition's chunk in
 * its own transaction and fetches again at once. Every service waits 75 ms by default, as the
 * relays linger (RELAY_LINGER_MS): fewer transactions per event, for up to that much latency per
 * hop (docs/performance.md); in orders, both replies of an order, from two topics, then lock the
 * order once ("One lock per order").
 */
export const kafkaChunkLingerMs = z.coerce.number().int().min(0).max(1_000).default(75);

/**
 * Announce only what the database's standby holds, so that a failover to it cannot take back a
 * commit whose event is on Kafka, or one whose consumed event Kafka has forgotten (standbyWait.ts,
 * docs/production.md#database-failover): the relay publishes a batch, and a consumer commits its
 * offsets, once the standby has flushed the primary's WAL up to that moment.
 * `DATABASE_WAIT_FOR_STANDBY`: `any` streaming standby, or the one of this application_name (as
 * in pg_stat_replication and synchronous_standby_names); unset (default): off, for a database
 * without a standby or with a synchronous one. Reading the standby's position needs pg_monitor.
 * `DATABASE_STANDBY_WAIT_MS`: the longest wait before trying again later.
 */
export const standbySettings = {
  DATABASE_WAIT_FOR_STANDBY: z
    .string()
    .regex(
      /^[A-Za-z0-9_.-]{1,63}$/,
      "`any`, or a standby's application_name: letters, digits, '_', '.', '-', at most 63",
    )
    .optional(),
  DATABASE_STANDBY_WAIT_MS: z.coerce.number().int().positive().default(5_000),
};

/** How a service creates the topics it needs when they do not exist yet (ensureTopics). */
export const kafkaTopicSettings = {
  /** Partitions; the Kafka key (an aggregate id) picks one, so an aggregate's events keep their order. */
  KAFKA_TOPIC_PARTITIONS: positiveInt(6),
  /** Replicas: 1 for the one local broker; 3 on a cluster (docs/production.md, "Replication"). */
  KAFKA_REPLICATION_FACTOR: positiveInt(1),
};

/**
 * What a process pointed at several brokers with topics of one replica should be told at start-up:
 * the topics it creates then live on one broker and go with it (docs/production.md, "Kafka
 * replication factor and min.insync.replicas"). Undefined when there is nothing to say.
 */
export function replicationWarning(config: {
  KAFKA_BROKERS: string[];
  KAFKA_REPLICATION_FACTOR: number;
}): string | undefined {
  const brokers = config.KAFKA_BROKERS.length;
  if (brokers < 2 || config.KAFKA_REPLICATION_FACTOR > 1) return undefined;
  return (
    `KAFKA_REPLICATION_FACTOR=1 with ${brokers} brokers in KAFKA_BROKERS: topics this process creates ` +
    'get one copy, lost with its broker; set KAFKA_REPLICATION_FACTOR=3 on a cluster (existing topics are not changed)'
  );
}

export function topicLayout(config: { KAFKA_TOPIC_PARTITIONS: number; KAFKA_REPLICATION_FACTOR: number }) {
  return { partitions: config.KAFKA_TOPIC_PARTITIONS, replicationFactor: config.KAFKA_REPLICATION_FACTOR };
}

/**
 * The settings of every Kafka-consuming service (inventory, billing); each adds its own, and refines
 * the whole with refineKafkaSecurity and refineKafkaGroupProtocol.
 */
export function consumerServiceSchema(defaults: { port: number; groupId: string }) {
  return z.object({
    /** Health and metrics endpoint. */
    PORT: port(defaults.port),
    NODE_ENV: z.string().optional(),
    DATABASE_URL: postgresUrl,
    KAFKA_BROKERS: kafkaBrokers,
    KAFKA_TOPIC_PREFIX: topicPrefix,
    KAFKA_CLIENT: kafkaClient,
    KAFKA_GROUP_PROTOCOL: kafkaGroupProtocol,
    ...kafkaTopicSettings,
    ...kafkaSecuritySettings,
    /** Consumer group; also this consumer's name in processed_events. */
    KAFKA_GROUP_ID: z.string().min(1).default(defaults.groupId),
    KAFKA_COMMIT_INTERVAL_MS: kafkaCommitIntervalMs,
    KAFKA_SESSION_TIMEOUT_MS: kafkaSessionTimeoutMs,
    KAFKA_CHUNK_LINGER_MS: kafkaChunkLingerMs,
    LOG_LEVEL: logLevel,
    MIGRATE_ON_START: z.stringbool().default(true),
    INBOX_RETENTION_HOURS: inboxRetentionHours,
    ...standbySettings,
  });
}

/**
 * Whether an HTTP request's W3C trace context (traceparent, tracestate, baggage) becomes the parent
 * of its span (incomingTraceContext.ts). Off by default: a public caller's `-01` would otherwise
 * trace its request past TRACING_MAX_TRACES_PER_SECOND and choose the trace id; the span starts a
 * trace of its own instead, linked to the caller's. On only behind a gateway that sets or strips it.
 */
export const trustIncomingTraceparent = {
  TRACING_TRUST_INCOMING_TRACEPARENT: z.stringbool({ error: 'expected true or false' }).default(false),
};

/**
 * The fault points, naive write modes and broken builds that the chaos suite and the demo switch on
 * exist in the code that runs in production, so a process refuses every one of them unless
 * OUTBOX_ALLOW_FAULTS says it is a test (`test`: the devstack's stacks, the chaos suite) or the
 * local demo (`demo`). Unset, the default, is production: deny, whatever NODE_ENV says.
 */
export const allowFaults = {
  OUTBOX_ALLOW_FAULTS: z
    .enum(['demo', 'test'], { error: 'expected demo or test (unset: none allowed)' })
    .optional(),
};

/** When each of a service's test and demo switches is on, by variable. */
export type FaultSwitches<C> = Record<string, (config: C) => boolean>;

/**
 * Refuse, naming the variable, every switch of `switches` that is on without OUTBOX_ALLOW_FAULTS,
 * and OUTBOX_ALLOW_FAULTS itself with NODE_ENV=production (a belt to the braces of the default).
 */
export function refuseFaultsUnlessAllowed<
  S extends z.ZodType<{ NODE_ENV?: string | undefined; OUTBOX_ALLOW_FAULTS?: 'demo' | 'test' | undefined }>,
>(schema: S, switches: FaultSwitches<z.output<S>>) {
  return schema.superRefine((config, context) => {
    if (config.OUTBOX_ALLOW_FAULTS !== undefined && config.NODE_ENV === 'production') {
      context.addIssue({
        code: 'custom',
        path: ['OUTBOX_ALLOW_FAULTS'],
        message: 'allows test and demo switches and is refused when NODE_ENV=production',
      });
      return;
    }
    if (config.OUTBOX_ALLOW_FAULTS !== undefined) return;
    for (const [variable, isOn] of Object.entries(switches)) {
      if (!isOn(config)) continue;
      context.addIssue({
        code: 'custom',
        path: [variable],
        message: 'is a test or demo switch and is refused unless OUTBOX_ALLOW_FAULTS=test or demo',
      });
    }
  });
}
