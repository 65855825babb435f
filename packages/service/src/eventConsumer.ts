import { trace } from '@opentelemetry/api';
import {
  applyChunk,
  type ChunkItem,
  type ConsumerStats,
  createKafka,
  type EventEnvelope,
  type FailingPartition,
  type HandleResult,
  type RunningConsumer,
  runConsumer,
  type SqlExecutor,
  startInboxRetention,
  topicFor,
} from '@outbox/events';
import type { Logger } from 'pino';
import { createConsumerMetrics } from './consumerMetrics.ts';
import { toError } from './errors.ts';
import type { MetricsRegistry } from './opsServer.ts';
import { inProcessSpan } from './tracingMessaging.ts';

/** Applies one event inside the consumer's transaction; returns a word for the log ("RESERVED"). */
export type EffectHandler<Tx> = (tx: Tx, event: EventEnvelope) => Promise<string | undefined>;

/**
 * A handler with a step before the transaction: `prepare` runs outside any transaction, before
 * the transaction of the chunk the event is in (and again if that chunk is retried), e.g. to call
 * a payment provider idempotently by the event id without holding a connection; `apply` then
 * records its answer. `prepare` also runs for an event that turns out to be a redelivery.
 */
export type PreparedHandler<Tx> = {
  prepare?: (event: EventEnvelope) => Promise<void>;
  apply: EffectHandler<Tx>;
};

export type EventConsumerOptions<Tx extends SqlExecutor> = {
  /** Consumer group, and this consumer's name in processed_events. */
  groupId: string;
  kafka: { brokers: string[]; topicPrefix: string; topicPartitions: number };
  /** Aggregate types whose topics to consume, e.g. `['order']` for `order.events`. */
  aggregateTypes: string[];
  /** e.g. `(work) => prisma.$transaction(work)`; one transaction applies a chunk of events. */
  transaction: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;
  /** One handler per event type; other types on the topics are ignored (and not recorded). */
  handlers: Record<string, EffectHandler<Tx> | PreparedHandler<Tx>>;
  logger: Logger;
  killAfterCommit?: boolean;
  /** Test-only: false runs effects again for redelivered events (see ApplyOnceOptions.dedup). */
  inboxDedup?: boolean;
  /** Where the consumer's metrics (consumer_*) are registered. */
  registry: MetricsRegistry;
  /** At most this many events per transaction (default 200). */
  maxChunk?: number;
  /** Partitions applied at once, one transaction (connection) each (default 3). */
  partitionsConsumedConcurrently?: number;
  /** Backoff of a failing chunk (default 200 ms doubling to 5 s). */
  retry?: { baseMs: number; capMs: number };
  /** processed_events rows older than this are deleted (packages/events/src/inbox/retention.ts); 0 keeps them. */
  inboxRetentionHours?: number;
};

/** How often consumer lag is refreshed from the broker (committed vs. end offsets). */
const LAG_INTERVAL_MS = 15_000;
/** A partition whose chunk failed this many times in a row makes the consumer `degraded`. */
const DEGRADED_AFTER_FAILURES = 3;

export type EventConsumer = {
  health(): {
    status: 'ok' | 'degraded';
    lastError?: string;
    stuckPartitions?: FailingPartition[];
  } & ConsumerStats;
  stop(): Promise<void>;
};

/**
 * Consume the given topics and apply each known event exactly once in effect, in chunks
 * (runConsumer): each chunk's processed_events rows, its effects and any events the handlers
 * write to the service's own outbox commit together. Each event runs in its own `process` span.
 * Starts in the background and keeps retrying while Kafka is unreachable, so the service (and an
 * HTTP API in the same process) is up regardless.
 */
export function startEventConsumer<Tx extends SqlExecutor>(options: EventConsumerOptions<Tx>): EventConsumer {
  const { groupId, logger } = options;
  const kafka = createKafka({ clientId: groupId, brokers: options.kafka.brokers, logger });
  const topics = options.aggregateTypes.map((type) => topicFor(type, options.kafka.topicPrefix));
  let running: RunningConsumer | undefined;
  const metrics = createConsumerMetrics(options.registry, groupId, () => running?.failing() ?? []);
  let stopped = false;
  let lastError: string | undefined;

  const handlers = new Map(
    Object.entries(options.handlers).map(([type, handler]) => [
      type,
      typeof handler === 'function' ? { apply: handler } : handler,
    ]),
  );

  const handleChunk = async (items: ChunkItem[]): Promise<HandleResult[]> => {
    const seconds: number[] = [];
    const outcomes: (string | undefined)[] = [];
    const results = await applyChunk(
      options.transaction,
      groupId,
      items.map((item) => item.event),
      {
        dedup: options.inboxDedup !== false,
        handles: (event) => handlers.has(event.type),
        apply: async (tx, event, index) => {
          const started = performance.now();
          outcomes[index] = await handlers.get(event.type)?.apply(tx, event);
          seconds[index] = (performance.now() - started) / 1000;
        },
        // One `process <topic>` span per event: its handler's queries and any reply event it
        // writes to the outbox belong to the event's trace.
        around: (index, work) =>
          inProcessSpan(items[index] as ChunkItem, groupId, async () => {
            const result = await work();
            const outcome = outcomes[index];
            trace.getActiveSpan()?.setAttributes({
              'outbox.consumer.result': result,
              ...(outcome ? { 'outbox.consumer.outcome': outcome } : {}),
            });
            return result;
          }),
      },
    );
    // Committed: count and log (debug only: no log line per event at info on the hot path).
    for (const [index, item] of items.entries()) {
      const result = results[index] as HandleResult;
      metrics.onHandled(item.event, result, seconds[index] ?? 0);
      if (logger.isLevelEnabled('debug')) {
        const { id, type, subject } = item.event;
        logger.debug({ eventId: id, type, subject, result, outcome: outcomes[index] }, 'event handled');
      }
    }
    return results;
  };

  const prepare = async (item: ChunkItem): Promise<void> => {
    await handlers.get(item.event.type)?.prepare?.(item.event);
  };

  const connect = async (attempt: number): Promise<void> => {
    if (stopped) return;
    try {
      running = await runConsumer({
        kafka,
        groupId,
        topics,
        topicPartitions: options.kafka.topicPartitions,
        logger,
        handleChunk,
        ...([...handlers.values()].some((handler) => handler.prepare) ? { prepare } : {}),
        onChunk: (items) => metrics.chunkSize.observe(items.length),
        onDeadLettered: (topic) => metrics.deadLettered.inc({ consumer: groupId, topic }),
        onRetry: (topic, partition) =>
          metrics.retries.inc({ consumer: groupId, topic, partition: String(partition) }),
        ...(options.maxChunk ? { maxChunk: options.maxChunk } : {}),
        ...(options.partitionsConsumedConcurrently
          ? { partitionsConsumedConcurrently: options.partitionsConsumedConcurrently }
          : {}),
        ...(options.retry ? { retry: options.retry } : {}),
        ...(options.killAfterCommit ? { killAfterCommit: true } : {}),
      });
      lastError = undefined;
      logger.info({ groupId }, 'consuming');
      if (stopped) await running.stop();
    } catch (err) {
      lastError = toError(err).message;
      const delayMs = Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5));
      logger.warn({ err, delayMs }, 'cannot start consuming yet; retrying');
      setTimeout(() => void connect(attempt + 1), delayMs).unref();
    }
  };
  void connect(0);

  // Lag is read from the broker on a timer, not per message: it is the group's view (committed
  // offsets), which is what an operator wants to see, and it costs two admin requests per topic.
  const admin = kafka.admin();
  let adminConnected: Promise<void> | undefined;
  const lagTimer = setInterval(() => {
    if (!running) return;
    adminConnected ??= admin.connect();
    adminConnected
      .then(() => metrics.updateLag(admin, topics))
      .catch((err: unknown) => {
        adminConnected = undefined;
        logger.debug({ err }, 'could not read consumer lag');
      });
  }, LAG_INTERVAL_MS);
  lagTimer.unref();

  const retention = startInboxRetention({
    consumer: groupId,
    retentionHours: options.inboxRetentionHours ?? 0,
    transaction: options.transaction,
    logger,
  });

  const empty: ConsumerStats = { applied: 0, duplicates: 0, ignored: 0, deadLettered: 0 };
  return {
    health: () => {
      // A partition retrying the same chunk again and again is not ok, even though the process
      // is up: the events behind it wait (issue 13). The reason is the last failure's.
      const stuck = (running?.failing() ?? []).filter((p) => p.failures >= DEGRADED_AFTER_FAILURES);
      const error =
        lastError ??
        (stuck[0]
          ? `${stuck[0].topic}[${stuck[0].partition}] at offset ${stuck[0].offset} failed ${stuck[0].failures} times: ${stuck[0].reason}`
          : undefined);
      return {
        status: running && !error ? 'ok' : 'degraded',
        ...(error ? { lastError: error } : {}),
        ...(stuck.length > 0 ? { stuckPartitions: stuck } : {}),
        ...(running?.stats ?? empty),
      };
    },
    stop: async () => {
      stopped = true;
      clearInterval(lagTimer);
      retention.stop();
      await running?.stop();
      await admin.disconnect();
    },
  };
}
