import type { EventEnvelope } from '@outbox/contracts';
import type { SqlExecutor } from '@outbox/runtime/sql-executor';
import type { ApplyOnceOptions } from './applyOnce.ts';
import { recordProcessed } from './dedup.ts';

/** What happened to one event of a chunk. */
export type ChunkResult = 'applied' | 'duplicate' | 'ignored';

/** The handler of the event at `index` of the chunk threw `cause`; the transaction rolled back. */
export class EventFailedError extends Error {
  override readonly name = 'EventFailedError';
  readonly index: number;
  override readonly cause: unknown;
  constructor(index: number, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.index = index;
    this.cause = cause;
  }
}

export type ApplyChunkOptions<Tx> = ApplyOnceOptions & {
  /** Whether this consumer handles the event's type at all; other events are neither recorded nor run. */
  handles(event: EventEnvelope): boolean;
  /** The event's effect, inside the chunk's transaction. */
  apply(tx: Tx, event: EventEnvelope, index: number): Promise<void>;
  /**
   * Events applied together rather than one by one: consecutive new events of the chunk with the
   * same key (e.g. their type) go to `applyRun` in one call, in offset order, so a handler can
   * apply them with a few set-based statements. An event with no key goes to `apply` alone. Other
   * events between two of a run (duplicates, types this consumer ignores) do not break it: only
   * a new event with another key does, because events of different types may touch one order.
   */
  runKey?(event: EventEnvelope): string | undefined;
  /** The effects of a run (indexes into the chunk, ascending), inside the chunk's transaction. */
  applyRun?(tx: Tx, indexes: number[]): Promise<void>;
  /**
   * Runs around every event of the chunk applied alone (not in a run) and around every ignored or
   * duplicate event, in offset order (e.g. to give each event its `process` span). Must call and
   * return `work()`.
   */
  around?(index: number, work: () => Promise<ChunkResult>): Promise<ChunkResult>;
};

/**
 * Apply a chunk of events exactly once in effect, in ONE transaction: the dedup rows of all of
 * them in one set-based statement, then the effects of the newly recorded ones in offset order,
 * runs of one kind together (`runKey`). A failure pinned on one event throws `EventFailedError`
 * naming it, after the whole transaction rolled back (the caller decides: dead-letter that event
 * and re-run the rest, or retry); a failure of a run of several events is rethrown as it is (the
 * caller re-runs the events one at a time to find the culprit).
 * The chunk-sized sibling of `applyOnce`, which it replaces in the consumer loop.
 */
export async function applyChunk<Tx extends SqlExecutor>(
  transaction: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>,
  consumer: string,
  events: EventEnvelope[],
  options: ApplyChunkOptions<Tx>,
): Promise<ChunkResult[]> {
  const ours = events.filter((event) => options.handles(event));
  const around = options.around ?? ((_index, work) => work());
  return transaction(async (tx) => {
    const fresh = await recordProcessed(tx, consumer, ours);
    const results: ChunkResult[] = new Array(events.length);
    let run: { key: string; indexes: number[] } | undefined;
    const flush = async () => {
      if (!run) return;
      const { indexes } = run;
      run = undefined;
      try {
        await options.applyRun?.(tx, indexes);
      } catch (err) {
        throw indexes.length === 1 ? new EventFailedError(indexes[0] as number, err) : err;
      }
      for (const index of indexes) results[index] = 'applied';
    };
    for (const [index, event] of events.entries()) {
      const handled = options.handles(event);
      // delete: a second copy of the same event in this chunk is a duplicate.
      const isNew = handled && (fresh.delete(event.id.toLowerCase()) || options.dedup === false);
      const key = isNew && options.applyRun ? options.runKey?.(event) : undefined;
      if (key !== undefined) {
        if (run && run.key !== key) await flush();
        run ??= { key, indexes: [] };
        run.indexes.push(index);
        continue;
      }
      if (isNew) await flush();
      results[index] = await around(index, async () => {
        if (!handled) return 'ignored';
        if (!isNew) return 'duplicate';
        try {
          await options.apply(tx, event, index);
        } catch (err) {
          throw new EventFailedError(index, err);
        }
        return 'applied';
      });
    }
    await flush();
    return results;
  });
}
