import { context, trace } from '@opentelemetry/api';
import {
  type EventData,
  type EventEnvelope,
  type EventType,
  type NewEvent,
  topicFor,
} from '@outbox/contracts';
import { writeEvents } from '@outbox/outbox';
import { exponentialDelayMs } from '@outbox/runtime/backoff';
import { toError } from '@outbox/runtime/errors';
import { createKafka } from '@outbox/runtime/kafka';
import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import { endSpan, inProcessSpan, startProcessSpan } from '@outbox/runtime/trace-hand-off';
import type { Logger } from 'pino';
import { applyChunk, EventFailedError } from './applyChunk.ts';
import { createConsumerMetrics } from './consumerMetrics.ts';
import { startInboxRetention } from './retention.ts';
import {
  type ChunkItem,
  type ConsumerStats,
  checkEventData,
  type FailingPartition,
  type HandleResult,
  type RunningConsumer,
  runConsumer,
} from './runConsumer.ts';

// Every handler is typed by the data of the events it handles (`TData`, e.g. OrderCreatedV1): the
// loop checks each event's data against its contract before any handler sees it (checkEventData),
// and a handler map (EventHandlers) only takes, for each type, a handler of that type's data.

/** Applies one event inside the consumer's transaction; returns a word for the log ("RESERVED"). */
export type EffectHandler<Tx, TData = unknown> = (
  tx: Tx,
  event: EventEnvelope<TData>,
) => Promise<string | undefined>;

/**
 * A handler with a step before the transaction: `prepare` runs outside any transaction, before
 * the transaction of the chunk the event is in (and again if that chunk is retried), e.g. to call
 * a payment provider idempotently by the event id without holding a connection; `apply` then
 * records its answer. `prepare` also runs for an event that turns out to be a redelivery.
 */
export type PreparedHandler<Tx, TData = unknown> = {
  prepare?: (event: EventEnvelope<TData>) => Promise<void>;
  apply: EffectHandler<Tx, TData>;
};

/** What a batch handler did with one event: a word for its span, and the events it answers with. */
export type Applied = { outcome: string; replies?: NewEvent[] };

/**
 * A handler that takes the new events of its type(s) in a chunk together, so that it can apply them
 * with a few set-based statements instead of a few statements each (docs/design.md, "Consumers
 * in chunks"). `applyAll` gets them in offset order and returns one `Applied` per event; the
 * replies are written to the service's outbox in the same transaction, with one statement, each
 * in the trace of the event it answers. A failure fails the whole run; the loop then re-runs its
 * events one at a time to find the one to dead-letter (or retries, if the failure is transient).
 * `prepareAll`, like PreparedHandler's `prepare`, runs before the transaction and outside any,
 * for every readable event of the type in the chunk, redeliveries included; it throws
 * `EventFailedError` with the index into `events` to pin a failure on one of them.
 */
export type BatchHandler<Tx, TData = unknown> = {
  prepareAll?: (events: EventEnvelope<TData>[]) => Promise<void>;
  applyAll: (tx: Tx, events: EventEnvelope<TData>[]) => Promise<Applied[]>;
};

type AnyHandler<Tx, TData = unknown> =
  | EffectHandler<Tx, TData>
  | PreparedHandler<Tx, TData>
  | BatchHandler<Tx, TData>;

/** A consumer's handlers: for each event type it handles, a handler of that type's data. */
export type EventHandlers<Tx> = { [T in EventType]?: AnyHandler<Tx, EventData<T>> };

/**
 * A batch handler applied to ONE event in the caller's transaction, its data checked first and its
 * replies written to the outbox as the loop does: the one-event form, for tests and tools that
 * deliver by hand. The caller picks the handler of the event's type, as the loop would.
 */
export async function applyOne<Tx extends SqlExecutor, TData>(
  tx: Tx,
  source: string,
  handler: BatchHandler<Tx, TData>,
  event: EventEnvelope,
): Promise<string | undefined> {
  const [applied] = await handler.applyAll(tx, [checkEventData(event) as EventEnvelope<TData>]);
  await writeEvents(
    tx,
    source,
    (applied?.replies ?? []).map((reply) => ({ event: reply })),
  );
  return applied?.outcome;
}

export type EventConsumerOptions<Tx extends SqlExecutor> = {
  /** The service's CloudEvents `source` (e.g. `/inventory`), for the replies of batch handlers. */
  source: string;
  /** Consumer group, and this consumer's name in processed_events. */
  groupId: string;
  kafka: { brokers: string[]; topicPrefix: string; topicPartitions: number };
  /** Aggregate types whose topics to consume, e.g. `['order']` for `order.events`. */
  aggregateTypes: string[];
  /** e.g. `(work) => prisma.$transaction(work)`; one transaction applies a chunk of events. */
  transaction: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;
  /** One handler per event type; other types on the topics are ignored (and not recorded). */
  handlers: EventHandlers<Tx>;
  logger: Logger;
  /** Test-only (consumerFaults.ts): false runs effects again for redelivered events (see ApplyOnceOptions.dedup). */
  inboxDedup?: boolean;
  /** Where the consumer's metrics (consumer_*) are registered. */
  registry: MetricsRegistry;
  /** At most this many events per transaction (default 200). */
  maxChunk?: number;
  /** Partitions applied at once, one transaction (connection) each (default 3). */
  partitionsConsumedConcurrently?: number;
  /** Backoff of a failing chunk (default 200 ms doubling to 5 s). */
  retry?: { baseMs: number; capMs: number };
  /** processed_events rows older than this are deleted (packages/inbox/src/retention.ts); 0 keeps them. */
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

  const handlers = new Map<string, PreparedHandler<Tx>>();
  const batchHandlers = new Map<string, BatchHandler<Tx>>();
  // A run is the consecutive new events of one batch handler, whatever their types: one handler
  // may take several types (orders' replies).
  const runKeys = new Map<BatchHandler<Tx>, string>();
  // Here (and in applyOne) a handler's data type is set aside: runConsumer hands over only events
  // whose data passed the schema of their type (checkEventData), each to the handler of its type.
  for (const [type, handler] of Object.entries(options.handlers) as [string, AnyHandler<Tx> | undefined][]) {
    if (!handler) continue;
    if (typeof handler === 'function') handlers.set(type, { apply: handler });
    else if ('applyAll' in handler) {
      batchHandlers.set(type, handler);
      if (!runKeys.has(handler)) runKeys.set(handler, type);
    } else handlers.set(type, handler);
  }

  /** A run of new events of one batch handler's type: one call, spans and replies per event. */
  const applyRun = async (
    tx: Tx,
    items: ChunkItem[],
    indexes: number[],
    outcomes: (string | undefined)[],
    seconds: number[],
  ) => {
    const run = indexes.map((index) => items[index] as ChunkItem);
    const handler = batchHandlers.get(run[0]?.event.type ?? '') as BatchHandler<Tx>;
    const spans = run.map((item) => startProcessSpan(item, groupId));
    const started = performance.now();
    try {
      // The run's statements serve all its events; they are traced under the first one's span
      // (each event's span says how large its run was).
      const applied = await context.with(spans[0]?.context ?? context.active(), () =>
        handler.applyAll(
          tx,
          run.map((item) => item.event),
        ),
      );
      if (applied.length !== run.length)
        throw new Error(
          `handler of ${run[0]?.event.type} answered ${applied.length} of ${run.length} events`,
        );
      await writeEvents(
        tx,
        options.source,
        applied.flatMap((result, k) =>
          (result.replies ?? []).map((event) => ({ event, traceContext: spans[k]?.context })),
        ),
      );
      const each = (performance.now() - started) / 1000 / run.length;
      for (const [k, index] of indexes.entries()) {
        outcomes[index] = applied[k]?.outcome;
        seconds[index] = each;
        spans[k]?.span.setAttributes({
          'outbox.consumer.result': 'applied',
          'outbox.consumer.run_size': run.length,
          'outbox.consumer.outcome': applied[k]?.outcome ?? '',
        });
      }
    } catch (err) {
      for (const { span } of spans) endSpan(span, err);
      throw err;
    }
    for (const { span } of spans) span.end();
  };

  const handleChunk = async (items: ChunkItem[]): Promise<HandleResult[]> => {
    const seconds: number[] = [];
    const outcomes: (string | undefined)[] = [];
    const results = await applyChunk(
      options.transaction,
      groupId,
      items.map((item) => item.event),
      {
        dedup: options.inboxDedup !== false,
        handles: (event) => handlers.has(event.type) || batchHandlers.has(event.type),
        runKey: (event) => {
          const handler = batchHandlers.get(event.type);
          return handler && runKeys.get(handler);
        },
        applyRun: (tx, indexes) => applyRun(tx, items, indexes, outcomes, seconds),
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

  /**
   * The steps before a chunk's transaction: each batch handler's once for its events, the others'
   * once per event, all at once (they hold no connection). The earliest failing event is reported.
   */
  const prepare = async (items: ChunkItem[]): Promise<void> => {
    const tasks: Promise<void>[] = [];
    const byType = new Map<string, number[]>();
    for (const [index, item] of items.entries()) {
      const single = handlers.get(item.event.type)?.prepare;
      if (single)
        tasks.push(
          single(item.event).catch((err: unknown) => Promise.reject(new EventFailedError(index, err))),
        );
      else if (batchHandlers.get(item.event.type)?.prepareAll) {
        byType.set(item.event.type, [...(byType.get(item.event.type) ?? []), index]);
      }
    }
    for (const [type, indexes] of byType) {
      const prepareAll = batchHandlers.get(type)?.prepareAll as NonNullable<BatchHandler<Tx>['prepareAll']>;
      tasks.push(
        prepareAll(indexes.map((index) => (items[index] as ChunkItem).event)).catch((err: unknown) =>
          Promise.reject(
            // Not pinned on one event: thrown as it is, and the loop finds the event (runConsumer.ts).
            err instanceof EventFailedError
              ? new EventFailedError(indexes[err.index] as number, err.cause)
              : err,
          ),
        ),
      );
    }
    const failures = (await Promise.allSettled(tasks)).flatMap((result) =>
      result.status === 'rejected' ? [result.reason as unknown] : [],
    );
    const index = (err: unknown) => (err instanceof EventFailedError ? err.index : -1);
    failures.sort((a, b) => index(a) - index(b));
    if (failures.length > 0) throw failures[0];
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
        ...([...handlers.values()].some((handler) => handler.prepare) ||
        [...batchHandlers.values()].some((handler) => handler.prepareAll)
          ? { prepare }
          : {}),
        onChunk: (items) => metrics.chunkSize.observe(items.length),
        onDeadLettered: (topic) => metrics.deadLettered.inc({ consumer: groupId, topic }),
        onRetry: (topic, partition) =>
          metrics.retries.inc({ consumer: groupId, topic, partition: String(partition) }),
        ...(options.maxChunk ? { maxChunk: options.maxChunk } : {}),
        ...(options.partitionsConsumedConcurrently
          ? { partitionsConsumedConcurrently: options.partitionsConsumedConcurrently }
          : {}),
        ...(options.retry ? { retry: options.retry } : {}),
      });
      lastError = undefined;
      logger.info({ groupId }, 'consuming');
      if (stopped) await running.stop();
    } catch (err) {
      lastError = toError(err).message;
      // No jitter: a few processes retrying their first connection are no herd worth spreading.
      const delayMs = exponentialDelayMs(attempt, 1000, 30_000);
      logger.warn({ err, delayMs }, 'cannot start consuming yet; retrying');
      setTimeout(() => void connect(attempt + 1), delayMs).unref();
    }
  };
  void connect(1);

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
