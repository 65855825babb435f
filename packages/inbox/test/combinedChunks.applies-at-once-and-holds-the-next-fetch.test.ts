// The chunks of one fetch are applied together as soon as they are all in, not after the linger;
// the linger is served after the transaction, by answering the callers (and so letting the client
// fetch again) only when the rest of it is over. A full lot is answered at once. Timers and clock are faked.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChunkItem, ChunkResult } from '../src/chunk.ts';
import { combineChunks } from '../src/combinedChunks.ts';

const item = (partition: number, offset: number) =>
  ({ topic: 't', partition, message: { offset: String(offset) } }) as unknown as ChunkItem;

/** A handler that records each call (its items' partitions and when it ran) and applies everything. */
function recordingHandler() {
  const calls: { partitions: number[]; at: number }[] = [];
  const handle = async (items: ChunkItem[]): Promise<ChunkResult[]> => {
    calls.push({ partitions: items.map((i) => i.partition), at: Date.now() });
    return items.map(() => 'applied');
  };
  return { calls, handle };
}

/** When each promise settled, in fake milliseconds. */
function settledAt(promise: Promise<unknown>) {
  const at: { value?: number } = {};
  void promise.then(() => {
    at.value = Date.now();
  });
  return at;
}

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('combined chunks: apply at once, hold the next fetch', () => {
  const options = { lingerMs: 50, gatherMs: 5, maxEvents: 10 };

  it("applies one fetch's chunks in one call after the gathering window, not after the linger", async () => {
    const { calls, handle } = recordingHandler();
    const step = combineChunks(handle, options);
    const first = step([item(0, 1)]);
    const second = step([item(1, 1), item(1, 2)]);
    await vi.advanceTimersByTimeAsync(5);
    expect(calls).toEqual([{ partitions: [0, 1, 1], at: 5 }]);
    const [a, b] = [settledAt(first), settledAt(second)];
    await vi.advanceTimersByTimeAsync(100);
    expect(await first).toEqual(['applied']);
    expect(await second).toEqual(['applied', 'applied']);
    // Answered the rest of the linger after the transaction: the client fetches then.
    expect(a.value).toBe(50);
    expect(b.value).toBe(50);
  });

  it('holds the rest of the linger after a slow transaction too, as a wait before it would', async () => {
    const calls: number[] = [];
    const slow = async (items: ChunkItem[]): Promise<ChunkResult[]> => {
      calls.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, 80));
      return items.map(() => 'applied');
    };
    const step = combineChunks(slow, options);
    const done = settledAt(step([item(0, 1)]));
    await vi.advanceTimersByTimeAsync(200);
    expect(calls).toEqual([5]);
    expect(done.value).toBe(130);
  });

  it('applies and answers a full lot at once: a consumer catching up never waits', async () => {
    const { calls, handle } = recordingHandler();
    const step = combineChunks(handle, options);
    const items = Array.from({ length: 10 }, (_, i) => item(0, i));
    const done = settledAt(step(items));
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toEqual([{ partitions: items.map(() => 0), at: 0 }]);
    expect(done.value).toBe(0);
  });

  it('answers a failed lot at once, each chunk then applied alone', async () => {
    let call = 0;
    const failingTogether = async (items: ChunkItem[]): Promise<ChunkResult[]> => {
      call += 1;
      if (items.length > 1) throw new Error('one of them is poison');
      if (items[0]?.partition === 1) throw new Error('poison');
      return ['applied'];
    };
    const step = combineChunks(failingTogether, options);
    const good = step([item(0, 1)]);
    const poison = step([item(1, 1)]);
    const poisonSettled = poison.catch((err: Error) => ({ failedAt: Date.now(), message: err.message }));
    await vi.advanceTimersByTimeAsync(5);
    expect(await poisonSettled).toEqual({ failedAt: 5, message: 'poison' });
    const goodAt = settledAt(good);
    await vi.advanceTimersByTimeAsync(100);
    expect(await good).toEqual(['applied']);
    expect(goodAt.value).toBe(50);
    expect(call).toBe(3);
  });
});
