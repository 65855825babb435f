import type { EventEnvelope } from '../envelope.ts';
import { queryRows, type SqlExecutor } from '../sqlExecutor.ts';
import type { ApplyOnceOptions } from './applyOnce.ts';

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

// One statement records the whole chunk; `returning` says which events were new. `on conflict do
// nothing` also absorbs an id that appears twice in the same chunk (it is returned once).
const recordProcessed = `
  insert into processed_events (consumer, event_id, event_type)
  select * from unnest($1::text[], $2::uuid[], $3::text[])
  on conflict do nothing
  returning event_id::text as event_id`;

export type ApplyChunkOptions<Tx> = ApplyOnceOptions & {
  /** Whether this consumer handles the event's type at all; other events are neither recorded nor run. */
  handles(event: EventEnvelope): boolean;
  /** The event's effect, inside the chunk's transaction. */
  apply(tx: Tx, event: EventEnvelope, index: number): Promise<void>;
  /**
   * Runs around every event of the chunk, applied or not, in offset order (e.g. to give each event
   * its `process` span). Must call and return `work()`.
   */
  around?(index: number, work: () => Promise<ChunkResult>): Promise<ChunkResult>;
};

/**
 * Apply a chunk of events exactly once in effect, in ONE transaction: the dedup rows of all of
 * them in one set-based statement, then the effects of the newly recorded ones in offset order.
 * A handler failure throws `EventFailedError` naming the event, after the whole transaction
 * rolled back (the caller decides: dead-letter that event and re-run the rest, or retry).
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
    const fresh = new Set<string>();
    if (ours.length > 0) {
      const rows = await queryRows<{ event_id: string }>(tx, recordProcessed, [
        ours.map(() => consumer),
        ours.map((event) => event.id),
        ours.map((event) => event.type),
      ]);
      for (const row of rows) fresh.add(row.event_id.toLowerCase());
    }
    const results: ChunkResult[] = [];
    for (const [index, event] of events.entries()) {
      results.push(
        await around(index, async () => {
          if (!options.handles(event)) return 'ignored';
          const id = event.id.toLowerCase();
          // delete: a second copy of the same event in this chunk is a duplicate.
          if (!fresh.delete(id) && options.dedup !== false) return 'duplicate';
          try {
            await options.apply(tx, event, index);
          } catch (err) {
            throw new EventFailedError(index, err);
          }
          return 'applied';
        }),
      );
    }
    return results;
  });
}
