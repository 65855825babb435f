import type { ChunkHandler, ChunkItem, ChunkResult } from './chunk.ts';

export type CombineOptions = {
  /**
   * How long the first chunk waits for chunks of other partitions before the lot is applied. The
   * replies of one order come from two services on two topics, a few milliseconds apart: without
   * the wait, the two usually land in two transactions that lock the same order one after the other.
   */
  lingerMs: number;
  /** Applied at once, without waiting out the linger, when the waiting chunks hold this many events. */
  maxEvents: number;
};

type Waiting = {
  items: ChunkItem[];
  resolve: (results: ChunkResult[]) => void;
  reject: (err: unknown) => void;
};

/**
 * The chunk step, shared by the partitions the member consumes at once: chunks that arrive within
 * `lingerMs` of each other are applied in ONE call of `handleChunk`, i.e. one transaction, each
 * partition's events in its offset order, and each caller gets the results of its own events.
 * Every caller still resolves its partition's offsets only after that transaction committed.
 *
 * A combined transaction that fails is not diagnosed as one: each partition's chunk is then
 * applied on its own, one after the other, as without combining, and what that attempt throws goes to its
 * caller (chunkOutcomes.ts: dead letter, retry, one at a time). So a poison event costs the other
 * partitions one rolled-back attempt, never their progress, and is dead-lettered from its own
 * partition only.
 */
export function combineChunks(handleChunk: ChunkHandler, options: CombineOptions): ChunkHandler {
  let waiting: Waiting[] = [];
  let events = 0;
  let timer: NodeJS.Timeout | undefined;

  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const lot = waiting;
    waiting = [];
    events = 0;
    void applyLot(handleChunk, lot);
  };

  return (items) =>
    new Promise<ChunkResult[]>((resolve, reject) => {
      waiting.push({ items, resolve, reject });
      events += items.length;
      if (events >= options.maxEvents) flush();
      else timer ??= setTimeout(flush, options.lingerMs);
    });
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
