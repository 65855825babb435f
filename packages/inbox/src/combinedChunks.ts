import type { ChunkHandler, ChunkItem, ChunkResult } from './chunk.ts';

export type CombineOptions = {
  /**
   * The wait from one lot to the next: a lot that is not full is applied at once (after
   * `gatherMs`), and its callers are answered the rest of this long (`lingerMs - gatherMs`) after
   * its transaction. The client fetches again only once the chunks of its last fetch are answered,
   * so what arrives in the meantime comes as the next lot, one transaction. The replies of one
   * order come from two services on two topics, a few milliseconds apart: without the wait, the
   * two usually land in two transactions that lock the same order one after the other.
   */
  lingerMs: number;
  /**
   * How long the first chunk of a lot waits for the chunks of other partitions handed over with
   * it (one fetch's partitions come within the same moment); at most `lingerMs`.
   */
  gatherMs: number;
  /** Applied at once, and answered without waiting out the linger, when the lot holds this many events. */
  maxEvents: number;
};

type Waiting = {
  items: ChunkItem[];
  resolve: (results: ChunkResult[]) => void;
  reject: (err: unknown) => void;
};

/**
 * The chunk step, shared by the partitions the member consumes at once: chunks that arrive within
 * `gatherMs` of the first are applied in ONE call of `handleChunk`, i.e. one transaction, each
 * partition's events in its offset order, and each caller gets the results of its own events.
 * Every caller still resolves its partition's offsets only after that transaction committed.
 *
 * The wait that makes lots larger at low rates comes after the transaction, not before it: the
 * events in hand are applied at once, and the callers are answered the rest of the linger later,
 * which holds the client's next fetch back that long. So the consumer works as often as with the
 * whole wait before the transaction, and an event does not wait out the linger once fetched
 * (docs/performance.md, "The consumers' wait, after the transaction"). A full lot (`maxEvents`) is
 * answered at once: a consumer catching up never waits.
 *
 * A combined transaction that fails is not diagnosed as one: each partition's chunk is then
 * applied on its own, one after the other, as without combining, and what that attempt throws
 * goes to its caller (chunkOutcomes.ts: dead letter, retry, one at a time). So a poison event
 * costs the other partitions one rolled-back attempt, never their progress, and is dead-lettered
 * from its own partition only.
 */
export function combineChunks(handleChunk: ChunkHandler, options: CombineOptions): ChunkHandler {
  const gatherMs = Math.min(options.gatherMs, options.lingerMs);
  const holdMs = options.lingerMs - gatherMs;
  let waiting: Waiting[] = [];
  let events = 0;
  let timer: NodeJS.Timeout | undefined;

  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const lot = waiting;
    const full = events >= options.maxEvents;
    waiting = [];
    events = 0;
    void applyLot(handleChunk, full || holdMs === 0 ? lot : answeredAfter(lot, holdMs));
  };

  return (items) =>
    new Promise<ChunkResult[]>((resolve, reject) => {
      waiting.push({ items, resolve, reject });
      events += items.length;
      if (events >= options.maxEvents) flush();
      else timer ??= setTimeout(flush, gatherMs);
    });
}

/** The lot's chunks, each answered with its results `holdMs` after it was applied; a failure at once. */
function answeredAfter(lot: Waiting[], holdMs: number): Waiting[] {
  return lot.map((chunk) => ({
    ...chunk,
    resolve: (results) => setTimeout(() => chunk.resolve(results), holdMs),
  }));
}

async function applyLot(handleChunk: ChunkHandler, lot: Waiting[]): Promise<void> {
  if (lot.length > 1) {
    let results: ChunkResult[] | undefined;
    try {
      results = await handleChunk(lot.flatMap((chunk) => chunk.items));
    } catch {
      // Rolled back as a whole: each chunk on its own below says which one failed, and how.
    }
    if (results) {
      let start = 0;
      for (const chunk of lot) {
        chunk.resolve(results.slice(start, start + chunk.items.length));
        start += chunk.items.length;
      }
      return;
    }
  }
  // One after the other: the lot's chunks may lock the same rows, and each holds a connection.
  for (const chunk of lot) await handleChunk(chunk.items).then(chunk.resolve, chunk.reject);
}
