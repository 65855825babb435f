import { context, trace } from '@opentelemetry/api';
import { writeEvents } from '@outbox/outbox';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import { endSpan, inProcessSpan, startProcessSpan } from '@outbox/runtime/trace-hand-off';
import type { Logger } from 'pino';
import type { ChunkHandler, ChunkItem, ChunkResult } from './chunk.ts';
import type { ConsumerMetrics, HandledEvent } from './consumerMetrics.ts';
import { type NewEventCheck, recordProcessed } from './dedup.ts';
import { EventFailedError } from './failure.ts';
import { type BatchHandler, type HandlerTable, inChunk, type PreparedHandler } from './handlers.ts';

export type Transaction<Tx> = <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;

/**
 * The chunk's transaction (any Transaction is one). Its work answers what became of each event,
 * so that a decorator on this port (the fault points, faultPoints.ts) can act on how many were
 * applied.
 */
export type ChunkTransaction<Tx> = <D extends { result: ChunkResult }>(
  work: (tx: Tx) => Promise<D[]>,
) => Promise<D[]>;

/** The chunk step's ports: what a decorator may wrap (faultPoints.ts's withFaultPoints). */
export type ChunkPorts<Tx> = {
  transaction: ChunkTransaction<Tx>;
  /**
   * Which of the chunk's events to apply, from the ids its dedup rows found new: firstCopyOf
   * (dedup.ts). A port so that the chaos suite's broken dedup can replace it.
   */
  dedupCheck: (fresh: Set<string>) => NewEventCheck;
};

export type ChunkStepDeps<Tx> = ChunkPorts<Tx> & {
  /** The consumer group: the consumer's name in processed_events and on its spans. */
  consumer: string;
  /** The service's CloudEvents `source`, for the replies of batch handlers. */
  source: string;
  handlers: HandlerTable<Tx>;
  metrics: ConsumerMetrics;
  logger: Logger;
};

/** What became of one event inside the transaction: its result, its handler's word, its time. */
type Done = { result: ChunkResult; outcome?: string | undefined; seconds: number };

/**
 * The chunk step: apply a chunk exactly once in effect.
 *
 * 1. prepare: the handlers' steps before the transaction, outside any (handlers.ts);
 * 2. in ONE transaction: the dedup rows of all handled events in one set-based statement
 *    (dedup.ts), then the effects of the newly recorded ones in offset order, consecutive events
 *    of one batch handler together, each with its `process` span, and their replies written to
 *    the service's outbox;
 * 3. COMMIT; then the metrics, which never fail the chunk.
 *
 * A failure pinned on one event throws `EventFailedError` naming it, after the whole transaction
 * rolled back; a failure of a run of several events is thrown as it is (chunkOutcomes.ts decides).
 */
export function chunkStep<Tx extends SqlExecutor>(deps: ChunkStepDeps<Tx>): ChunkHandler {
  return async (items) => {
    await deps.handlers.prepare(items.map((item) => item.event));
    const done = await deps.transaction(async (tx) => {
      const handled = items.filter((item) => deps.handlers.route(item.event.type));
      const fresh = await recordProcessed(
        tx,
        deps.consumer,
        handled.map((item) => item.event),
      );
      return applyInOrder(tx, deps, items, deps.dedupCheck(fresh));
    });
    recordCommitted(deps, items, done);
    return done.map((d) => d.result);
  };
}

/** The chunk's events in offset order: new ones applied (alone or in runs), the others skipped. */
async function applyInOrder<Tx extends SqlExecutor>(
  tx: Tx,
  deps: ChunkStepDeps<Tx>,
  items: ChunkItem[],
  isNew: NewEventCheck,
): Promise<Done[]> {
  const done: Done[] = new Array(items.length);
  let run: { handler: BatchHandler<Tx>; indexes: number[] } | undefined;
  const flush = async () => {
    if (run) await applyRun(tx, deps, items, run.handler, run.indexes, done);
    run = undefined;
  };
  for (const [index, item] of items.entries()) {
    const route = deps.handlers.route(item.event.type);
    if (!route || !isNew(item.event.id)) {
      // Not new: it does not break a run, and nothing runs for it.
      done[index] = await skip(deps, item, route ? 'duplicate' : 'ignored');
    } else if (route.kind === 'run') {
      // A new event of another handler ends the run: events of different types may touch one order.
      if (run?.handler !== route.handler) await flush();
      run ??= { handler: route.handler, indexes: [] };
      run.indexes.push(index);
    } else {
      await flush();
      done[index] = await applyAlone(tx, deps, item, route.handler, index);
    }
  }
  await flush();
  return done;
}

/** One event through its own handler, in its `process` span. */
function applyAlone<Tx>(
  tx: Tx,
  deps: ChunkStepDeps<Tx>,
  item: ChunkItem,
  handler: PreparedHandler<Tx>,
  index: number,
): Promise<Done> {
  return inProcessSpan(item, deps.consumer, async () => {
    const started = performance.now();
    let outcome: string | undefined;
    try {
      outcome = await handler.apply(tx, item.event);
    } catch (err) {
      throw new EventFailedError(index, err);
    }
    trace.getActiveSpan()?.setAttributes({
      'outbox.consumer.result': 'applied',
      ...(outcome ? { 'outbox.consumer.outcome': outcome } : {}),
    });
    return { result: 'applied', outcome, seconds: (performance.now() - started) / 1000 };
  });
}

/** A duplicate or an event of a type not handled here: nothing runs, but it gets its span. */
function skip<Tx>(deps: ChunkStepDeps<Tx>, item: ChunkItem, result: ChunkResult): Promise<Done> {
  return inProcessSpan(item, deps.consumer, async () => {
    trace.getActiveSpan()?.setAttributes({ 'outbox.consumer.result': result });
    return { result, seconds: 0 };
  });
}

/**
 * A run of new events of one batch handler: one call, then their replies with one statement, each
 * in the trace of the event it answers. The run's statements serve all its events; they are traced
 * under the first one's span (each event's span says how large its run was).
 */
async function applyRun<Tx extends SqlExecutor>(
  tx: Tx,
  deps: ChunkStepDeps<Tx>,
  items: ChunkItem[],
  handler: BatchHandler<Tx>,
  indexes: number[],
  done: Done[],
): Promise<void> {
  const run = indexes.map((index) => items[index] as ChunkItem);
  const spans = run.map((item) => startProcessSpan(item, deps.consumer));
  const started = performance.now();
  try {
    const applied = await context.with(spans[0]?.context ?? context.active(), () =>
      handler.applyAll(
        tx,
        run.map((item) => item.event),
      ),
    );
    if (applied.length !== run.length)
      throw new Error(`handler of ${run[0]?.event.type} answered ${applied.length} of ${run.length} events`);
    const replies = applied.flatMap((result, k) =>
      (result.replies ?? []).map((event) => ({ event, traceContext: spans[k]?.context })),
    );
    await writeEvents(tx, deps.source, replies);
    const seconds = (performance.now() - started) / 1000 / run.length;
    for (const [k, index] of indexes.entries()) {
      const outcome = applied[k]?.outcome;
      done[index] = { result: 'applied', outcome, seconds };
      spans[k]?.span.setAttributes({
        'outbox.consumer.result': 'applied',
        'outbox.consumer.run_size': run.length,
        'outbox.consumer.outcome': outcome ?? '',
      });
    }
  } catch (err) {
    for (const { span } of spans) endSpan(span, err);
    throw indexes.length === 1 ? new EventFailedError(indexes[0] as number, err) : inChunk(indexes, err);
  }
  for (const { span } of spans) span.end();
}

/**
 * Committed: count and log (debug only: no log line per event at info on the hot path). Nothing
 * here may throw into the chunk: it committed, and a throw would read as a rollback and re-run it.
 */
function recordCommitted<Tx>(deps: ChunkStepDeps<Tx>, items: ChunkItem[], done: Done[]): void {
  try {
    const handled: HandledEvent[] = items.map(({ event }, index) => ({
      event,
      result: done[index]?.result ?? 'ignored',
      seconds: done[index]?.seconds ?? 0,
    }));
    deps.metrics.onCommitted(handled);
    if (!deps.logger.isLevelEnabled('debug')) return;
    for (const [index, { event }] of items.entries()) {
      const { id, type, subject } = event;
      const { result, outcome } = done[index] ?? {};
      deps.logger.debug({ eventId: id, type, subject, result, outcome }, 'event handled');
    }
  } catch (err) {
    deps.logger.warn({ err }, 'chunk committed; recording its metrics failed');
  }
}
