import type { EventData, EventEnvelope, EventType, NewEvent } from '@outbox/contracts';
import { EventFailedError } from './failure.ts';

// Every handler is typed by the data of the events it handles (`TData`, e.g. OrderCreatedV1): the
// loop checks each event's data against its contract before any handler sees it (checkEventData
// in chunk.ts), and a handler map (EventHandlers) only takes, for each type, a handler of that
// type's data.

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
 * How the chunk applies an event of one type: alone, or in a run, i.e. together with the
 * consecutive new events of the same batch handler, whatever their types (one handler may take
 * several types, as orders' replies do).
 */
export type Route<Tx> =
  | { kind: 'alone'; handler: PreparedHandler<Tx> }
  | { kind: 'run'; handler: BatchHandler<Tx> };

/**
 * A consumer's handlers by event type. Here a handler's data type is set aside: the chunk hands
 * over only events whose data passed the schema of their type, each to the handler of its type.
 */
export class HandlerTable<Tx> {
  readonly #routes = new Map<string, Route<Tx>>();

  constructor(handlers: EventHandlers<Tx>) {
    for (const [type, handler] of Object.entries(handlers) as [string, AnyHandler<Tx> | undefined][]) {
      if (!handler) continue;
      if (typeof handler === 'function')
        this.#routes.set(type, { kind: 'alone', handler: { apply: handler } });
      else if ('applyAll' in handler) this.#routes.set(type, { kind: 'run', handler });
      else this.#routes.set(type, { kind: 'alone', handler });
    }
  }

  /** undefined: a type this consumer does not handle; its events are ignored and not recorded. */
  route(type: string): Route<Tx> | undefined {
    return this.#routes.get(type);
  }

  /**
   * The steps before a chunk's transaction: each batch handler's once for its events, the others'
   * once per event, all at once (they hold no connection). The earliest failing event is reported.
   */
  async prepare(events: EventEnvelope[]): Promise<void> {
    const tasks: Promise<void>[] = [];
    const runs = new Map<BatchHandler<Tx>, number[]>();
    for (const [index, event] of events.entries()) {
      const route = this.#routes.get(event.type);
      if (route?.kind === 'alone' && route.handler.prepare)
        tasks.push(route.handler.prepare(event).catch((err: unknown) => pinned(index, err)));
      else if (route?.kind === 'run' && route.handler.prepareAll)
        runs.set(route.handler, [...(runs.get(route.handler) ?? []), index]);
    }
    for (const [handler, indexes] of runs) {
      const prepareAll = handler.prepareAll as NonNullable<BatchHandler<Tx>['prepareAll']>;
      tasks.push(
        prepareAll(indexes.map((index) => events[index] as EventEnvelope)).catch((err: unknown) =>
          Promise.reject(inChunk(indexes, err)),
        ),
      );
    }
    const failures = (await Promise.allSettled(tasks)).flatMap((result) =>
      result.status === 'rejected' ? [result.reason as unknown] : [],
    );
    const order = (err: unknown) => (err instanceof EventFailedError ? err.index : -1);
    failures.sort((a, b) => order(a) - order(b));
    if (failures.length > 0) throw failures[0];
  }
}

function pinned(index: number, err: unknown): Promise<never> {
  return Promise.reject(new EventFailedError(index, err));
}

/**
 * A batch handler's failure, with the index it pinned (into the events it was given) turned
 * into an index into the chunk; a failure it did not pin stays as it is, and the loop finds the
 * event by re-running them one at a time.
 */
export function inChunk(indexes: readonly number[], err: unknown): unknown {
  return err instanceof EventFailedError
    ? new EventFailedError(indexes[err.index] as number, err.cause)
    : err;
}
