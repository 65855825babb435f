import { topicFor } from '@outbox/contracts';
import { exponentialDelayMs } from '@outbox/runtime/backoff';
import { toError } from '@outbox/runtime/errors';
import {
  CONSUMER_RETRY,
  createKafkaClient,
  type KafkaClient,
  type KafkaClientName,
  type KafkaGroupProtocol,
  type TopicLayout,
} from '@outbox/runtime/kafka';
import type { KafkaSecurity } from '@outbox/runtime/kafka-security';
import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import type { Logger } from 'pino';
import { type ChunkPorts, chunkStep, type Transaction } from './applyChunk.ts';
import type { ConsumerStats, FailingPartition } from './chunkOutcomes.ts';
import { type ConsumerMetrics, createConsumerMetrics } from './consumerMetrics.ts';
import { firstCopyOf } from './dedup.ts';
import { type FaultHooks, withFaultPoints } from './faultPoints.ts';
import { type EventHandlers, HandlerTable } from './handlers.ts';
import { type RunConsumerOptions, type RunningConsumer, runConsumer } from './kafkaLoop.ts';
import { startInboxRetention } from './retention.ts';

/** How the Kafka loop is tuned; it has a default for each. */
type LoopTuning = Pick<
  RunConsumerOptions,
  | 'maxChunk'
  | 'partitionsConsumedConcurrently'
  | 'retry'
  | 'sessionTimeoutMs'
  | 'heartbeatIntervalMs'
  | 'commitIntervalMs'
  | 'chunkLingerMs'
  | 'chunkGatherMs'
  | 'untilStandbyHolds'
>;

export type EventConsumerOptions<Tx extends SqlExecutor> = {
  /** The service's CloudEvents `source` (e.g. `/inventory`), for the replies of batch handlers. */
  source: string;
  /** Consumer group, and this consumer's name in processed_events. */
  groupId: string;
  kafka: {
    brokers: string[];
    security?: KafkaSecurity;
    topicPrefix: string;
    topicLayout: TopicLayout;
    /** KAFKA_CLIENT: the client library of the group member, the dead letters and the lag reads (kafkajs when left out). */
    client?: KafkaClientName;
    /** KAFKA_GROUP_PROTOCOL: how the group member takes part in its group (classic when left out). */
    groupProtocol?: KafkaGroupProtocol;
  };
  /** Aggregate types whose topics to consume, e.g. `['order']` for `order.events`. */
  aggregateTypes: string[];
  /** e.g. `(work) => prisma.$transaction(work)`; one transaction applies a chunk of events. */
  transaction: Transaction<Tx>;
  /** One handler per event type; other types on the topics are ignored (and not recorded). */
  handlers: EventHandlers<Tx>;
  logger: Logger;
  /** Where the consumer's metrics (consumer_*) are registered. */
  registry: MetricsRegistry;
  /** processed_events rows older than this are deleted (packages/inbox/src/retention.ts); 0 keeps them. */
  inboxRetentionHours?: number;
  /** The chaos suite's fault points (faultPoints.ts), put on the chunk step's ports at start-up; production has none. */
  faults?: FaultHooks;
} & LoopTuning;

/** The loop's tuning from the consumer's options, only the ones given. */
function loopTuning(options: LoopTuning): LoopTuning {
  const { maxChunk, partitionsConsumedConcurrently, retry, sessionTimeoutMs, heartbeatIntervalMs } = options;
  const { commitIntervalMs, chunkLingerMs, chunkGatherMs, untilStandbyHolds } = options;
  return {
    maxChunk,
    partitionsConsumedConcurrently,
    retry,
    sessionTimeoutMs,
    heartbeatIntervalMs,
    commitIntervalMs,
    chunkLingerMs,
    ...(chunkGatherMs === undefined ? {} : { chunkGatherMs }),
    ...(untilStandbyHolds ? { untilStandbyHolds } : {}),
  };
}

/**
 * A request the broker has not answered in this long fails (kafkajs's default is 30 s). A group
 * coordinator frozen (a long GC pause, a stopped VM) keeps its connections open and answers
 * nothing: the member's heartbeats and offset commits wait this long before it rejoins through
 * the coordinator that took the group over (docs/local-kafka.md, "When the group coordinator dies").
 */
const REQUEST_TIMEOUT_MS = 10_000;
/** How often consumer lag is refreshed from the broker (committed vs. end offsets). */
const LAG_INTERVAL_MS = 15_000;
/** A partition whose chunk failed this many times in a row makes the consumer `degraded`. */
const DEGRADED_AFTER_FAILURES = 3;

export type ConsumerHealth = {
  status: 'ok' | 'degraded';
  /** The client library of its group member, dead letters and lag reads (KAFKA_CLIENT). */
  kafkaClient: KafkaClientName;
  lastError?: string;
  stuckPartitions?: FailingPartition[];
} & ConsumerStats;

export type EventConsumer = { health(): ConsumerHealth; stop(): Promise<void> };

/**
 * Consume the given topics and apply each known event exactly once in effect, in chunks: the
 * Kafka loop (kafkaLoop.ts) hands each chunk to the chunk step (applyChunk.ts), whose
 * processed_events rows, effects and reply events commit together. Starts in the background and
 * keeps retrying while Kafka is unreachable, so the service (and an HTTP API in the same process)
 * is up regardless.
 */
export function startEventConsumer<Tx extends SqlExecutor>(options: EventConsumerOptions<Tx>): EventConsumer {
  const { groupId, logger } = options;
  const client = createKafkaClient({
    ...(options.kafka.client ? { client: options.kafka.client } : {}),
    ...(options.kafka.groupProtocol ? { groupProtocol: options.kafka.groupProtocol } : {}),
    clientId: groupId,
    brokers: options.kafka.brokers,
    security: options.kafka.security,
    logger,
    retry: CONSUMER_RETRY,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
  const topics = options.aggregateTypes.map((type) => topicFor(type, options.kafka.topicPrefix));
  let running: RunningConsumer | undefined;
  const metrics = createConsumerMetrics(options.registry, groupId, () => running?.failing() ?? []);
  const handleChunk = chunkStepOf(options, metrics);
  const starter = startInBackground(groupId, logger, async () => {
    running = await runConsumer({
      ...loopTuning(options),
      client,
      groupId,
      topics,
      topicLayout: options.kafka.topicLayout,
      logger,
      handleChunk,
      metrics,
    });
    return running;
  });
  const lag = watchLag(client, topics, metrics, logger, () => running !== undefined);
  const retention = startInboxRetention({
    consumer: groupId,
    retentionHours: options.inboxRetentionHours ?? 0,
    transaction: options.transaction,
    logger,
  });
  return {
    health: () => ({ ...healthOf(running, starter.lastError()), kafkaClient: client.name }),
    stop: async () => {
      retention.stop();
      await lag.stop();
      await starter.stop();
    },
  };
}

/**
 * The chunk step for the app's handlers. Its ports are wrapped with the fault points only when
 * there are some (the chaos suite), and once here, so that production runs them bare and the step
 * itself has no fault code.
 */
function chunkStepOf<Tx extends SqlExecutor>(options: EventConsumerOptions<Tx>, metrics: ConsumerMetrics) {
  const ports: ChunkPorts<Tx> = { transaction: options.transaction, dedupCheck: firstCopyOf };
  return chunkStep({
    consumer: options.groupId,
    source: options.source,
    handlers: new HandlerTable(options.handlers),
    ...(options.faults ? withFaultPoints(ports, options.faults) : ports),
    metrics,
    logger: options.logger,
  });
}

/** Start the loop, and again after a backoff while it cannot start (Kafka unreachable). */
function startInBackground(groupId: string, logger: Logger, start: () => Promise<RunningConsumer>) {
  let running: RunningConsumer | undefined;
  let stopped = false;
  let lastError: string | undefined;
  const attempt = async (n: number): Promise<void> => {
    if (stopped) return;
    try {
      running = await start();
      lastError = undefined;
      logger.info({ groupId }, 'consuming');
      if (stopped) await running.stop();
    } catch (err) {
      lastError = toError(err).message;
      // No jitter: a few processes retrying their first connection are no herd worth spreading.
      const delayMs = exponentialDelayMs(n, 1000, 30_000);
      logger.warn({ err, delayMs }, 'cannot start consuming yet; retrying');
      setTimeout(() => void attempt(n + 1), delayMs).unref();
    }
  };
  void attempt(1);
  return {
    lastError: () => lastError,
    stop: async () => {
      stopped = true;
      await running?.stop();
    },
  };
}

/**
 * Lag is read from the broker on a timer, not per message: it is the group's view (committed
 * offsets), which is what an operator wants to see, and it costs two admin requests per topic.
 */
function watchLag(
  client: KafkaClient,
  topics: string[],
  metrics: ConsumerMetrics,
  logger: Logger,
  started: () => boolean,
) {
  const admin = client.admin();
  let connected: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (!started()) return;
    connected ??= admin.connect();
    connected
      .then(() => metrics.updateLag(admin, topics))
      .catch((err: unknown) => {
        connected = undefined;
        logger.debug({ err }, 'could not read consumer lag');
      });
  }, LAG_INTERVAL_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      // A connect still under way would open its socket after the disconnect: let it end first.
      await connected?.catch(() => undefined);
      await admin.disconnect();
    },
  };
}

/**
 * Not ok while the group member is not consuming (crashed, being restarted by its client, given
 * up and being replaced), nor while a partition retries the same chunk again and again, even though
 * the process is up: the events behind it wait. The reason is the member's, or the last failure's.
 */
function healthOf(
  running: RunningConsumer | undefined,
  startError: string | undefined,
): Omit<ConsumerHealth, 'kafkaClient'> {
  const stuck = (running?.failing() ?? []).filter((p) => p.failures >= DEGRADED_AFTER_FAILURES);
  const [first] = stuck;
  const error =
    startError ??
    running?.memberProblem() ??
    (first
      ? `${first.topic}[${first.partition}] at offset ${first.offset} failed ${first.failures} times: ${first.reason}`
      : undefined);
  const stats = running?.stats ?? { applied: 0, duplicates: 0, ignored: 0, deadLettered: 0 };
  return {
    status: running && !error ? 'ok' : 'degraded',
    ...(error ? { lastError: error } : {}),
    ...(stuck.length > 0 ? { stuckPartitions: stuck } : {}),
    ...stats,
  };
}
