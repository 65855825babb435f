// The adaptive admission limit on its own (src/http/adaptiveLimit.ts), on an injected clock: it
// grows while in use, shrinks on a latency rise or a saga backlog past its bound (once per cooldown),
// and stays within [min, max]. No timers, no database.
import { describe, expect, it } from 'vitest';
import { AdaptiveLimit } from '../src/http/adaptiveLimit.ts';

function limiter(more: { min?: number; max?: number; backlogBoundMs?: number } = {}) {
  let nowMs = 0;
  const limit = new AdaptiveLimit({
    min: more.min ?? 2,
    max: more.max ?? 10,
    backlogBoundMs: more.backlogBoundMs ?? 1_000,
    cooldownMs: 250,
    now: () => nowMs,
  });
  return {
    limit,
    advance: (ms: number) => {
      nowMs += ms;
    },
    /** `count` requests of `ms` each, finishing with the limit in use (every slot taken). */
    samples: (count: number, ms: number) => {
      for (let i = 0; i < count; i++) limit.sample(ms, limit.limit);
    },
  };
}

describe('AdaptiveLimit', () => {
  it('starts at its maximum and stays there while the latency holds', () => {
    const { limit, samples } = limiter();
    expect(limit.limit).toBe(10);
    samples(2_000, 20);
    expect(limit.limit).toBe(10);
    expect(limit.typicalMs).toBe(20);
  });

  it('cuts by a tenth when the recent latency passes twice its long-term average, once per cooldown', () => {
    const { limit, samples, advance } = limiter();
    samples(100, 20);
    samples(10, 100);
    expect(limit.limit).toBe(9);
    expect(limit.lastCutReason).toBe('latency');
    // The typical time, which the queue's expected wait uses, hardly moved: (100 × 20 + 10 × 100) / 110.
    expect(limit.typicalMs).toBeCloseTo(27.3, 1);
    samples(10, 100); // the same slow spell within the cooldown: no second cut
    expect(limit.limit).toBe(9);
    advance(250);
    samples(1, 100);
    expect(limit.limit).toBe(8); // 10 × 0.9 × 0.9 = 8.1
  });

  it('grows back by about one slot per round of requests once the latency is back, and only while in use', () => {
    const { limit, samples, advance } = limiter();
    samples(100, 20);
    for (let i = 0; i < 5; i++) {
      samples(10, 200);
      advance(250);
    }
    expect(limit.limit).toBe(5); // 10 × 0.9^5 = 5.9
    // Idle: requests finishing with fewer than half the slots taken say nothing about more.
    for (let i = 0; i < 100; i++) limit.sample(20, 1);
    expect(limit.limit).toBe(5);
    samples(200, 20);
    expect(limit.limit).toBe(10);
  });

  it('cuts while the saga backlog is past its bound, never below the minimum, and recovers after', () => {
    const { limit, samples, advance } = limiter({ min: 3, backlogBoundMs: 1_000 });
    samples(50, 20);
    limit.backlog(900);
    samples(10, 20);
    expect(limit.limit).toBe(10);
    for (let i = 0; i < 40; i++) {
      limit.backlog(5_000);
      samples(5, 20);
      advance(250);
    }
    expect(limit.limit).toBe(3);
    expect(limit.lastCutReason).toBe('backlog');
    limit.backlog(200);
    samples(200, 20);
    expect(limit.limit).toBe(10);
  });
});
