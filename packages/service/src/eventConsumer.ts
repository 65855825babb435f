import { trace } from '@opentelemetry/api';
import {
  applyOnce,
  type ConsumerStats,
  createKafka,
  type EventEnvelope,
  type HandleResult,
  type RunningConsumer,
  runConsumer,
  type SqlExecutor,
  topicFor,
} from '@outbox/events';
import type { Logger } from 'pino';
import { createConsumerMetrics } from './consumerMetrics.ts';
import { toError } from './errors.ts';
import type { MetricsRegistry } from './opsServer.ts';
import { withConsumerSpans } from './tracingMessaging.ts';

/**
 * Applies one event inside the consumer's transaction; returns a word for the log ("RESERVED").
 * `prepare`, when present, runs first, outside any transaction and holding no connection: the
 * place for a call to another system (billing's payment provider), whose answer the handler then
 * records. It may run more than once for one event (a retry), so it must be idempotent.
 */
export type EffectHandler<Tx> = ((tx: Tx, event: EventEnvelope) => Promise<string | undefined>) & {
  prepare?: (event: EventEnvelope) => Promise<void>;
};

export type EventConsumerOptions<Tx extends SqlExecutor> = {
  /** Consumer group, and this consumer's name in processed_events. */
  groupId: string;
  kafka: { brokers: string[]; topicPrefix: string; topicPartitions: number };
  /** Aggregate types whose topics to consume, e.g. `['order']` for `order.events`. */
  aggregateTypes: string[];
  /** e.g. `(work) => prisma.$transaction(work)`. */
  transaction: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;
  /** One handler per event type; other types on the topics are ignored (and not recorded). */
  handlers: Record<string, EffectHandler<Tx>>;
  logger: Logger;
  killAfterCommit?: boolean;
  /** Test-only: false runs effects again for redelivered events (see ApplyOnceOptions.dedup). */
  inboxDedup?: boolean;
  /** Where the consumer's metrics (consumer_*) are registered. */
  registry: MetricsRegistry;
};

/** How often consumer lag is refreshed from the broker (committed vs. end offsets). */
const LAG_INTERVAL_MS = 15_000;

export type EventConsumer = {
  health(): { status: 'ok' | 'degraded'; lastError?: string } & ConsumerStats;
  stop(): Promise<void>;
};

/**
 * Consume the given topics and apply each known event exactly once in effect: the handler runs
 * inside `applyOnce`, so its effect, its processed_events row and any events it writes to the
 * service's own outbox commit together. Starts in the background and keeps retrying while Kafka
 * is unreachable, so the service (and an HTTP API in the same process) is up regardless.
 */
export function startEventConsumer<Tx extends SqlExecutor>(options: EventConsumerOptions<Tx>): EventConsumer {
  const { groupId, logger, handlers } = options;
  const kafka = createKafka({ clientId: groupId, brokers: options.kafka.brokers, logger });
  const metrics = createConsumerMetrics(options.registry);
  const topics = options.aggregateTypes.map((type) => topicFor(type, options.kafka.topicPrefix));
  let running: RunningConsumer | undefined;
  let stopped = false;
  let lastError: string | undefined;

  const handle = async (event: EventEnvelope): Promise<HandleResult> => {
    const handler = handlers[event.type];
    if (!handler) {
      trace.getActiveSpan()?.setAttribute('outbox.consumer.result', 'ignored');
      return 'ignored';
    }
    await handler.prepare?.(event);
    let outcome: string | undefined;
    // Runs inside the message's `process <topic>` span (withConsumerSpans below): the transaction's
    // queries and any reply event the handler writes to the outbox belong to the event's trace.
    const result = await applyOnce(
      options.transaction,
      groupId,
      event,
      async (tx) => {
        outcome = await handler(tx, event);
      },
      { dedup: options.inboxDedup !== false },
    );
    trace.getActiveSpan()?.setAttributes({
      'outbox.consumer.result': result,
      ...(outcome ? { 'outbox.consumer.outcome': outcome } : {}),
    });
    logger.info(
      { eventId: event.id, type: event.type, subject: event.subject, result, outcome },
      'event handled',
    );
    return result;
  };

  const connect = async (attempt: number): Promise<void> => {
    if (stopped) return;
    try {
      running = await runConsumer({
        kafka: withConsumerSpans(kafka, groupId),
        groupId,
        topics,
        topicPartitions: options.kafka.topicPartitions,
        logger,
        handle,
        onHandled: (event, result, seconds) => metrics.onHandled(groupId, event, result, seconds),
        onDeadLettered: (topic) => metrics.deadLettered.inc({ consumer: groupId, topic }),
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
      .then(() => metrics.updateLag(admin, groupId, topics))
      .catch((err: unknown) => {
        adminConnected = undefined;
        logger.debug({ err }, 'could not read consumer lag');
      });
  }, LAG_INTERVAL_MS);
  lagTimer.unref();

  const empty: ConsumerStats = { applied: 0, duplicates: 0, ignored: 0, deadLettered: 0 };
  return {
    health: () => ({
      status: running && !lastError ? 'ok' : 'degraded',
      ...(lastError ? { lastError } : {}),
      ...(running?.stats ?? empty),
    }),
    stop: async () => {
      stopped = true;
      clearInterval(lagTimer);
      await running?.stop();
      await admin.disconnect();
    },
  };
}
