import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runScheduled } from '../src/scheduler.ts';

// Real clock, generous tolerances: these machines are shared and busy.
describe('steady-rate scheduler', () => {
  it('starts task n at start + n/rate, even when each task takes much longer than the interval', async () => {
    const starts: number[] = [];
    const t0 = performance.now();
    // 50/s = one start every 20 ms, tasks of 150 ms: "sleep 20 ms after each task" would give ~6/s.
    const result = await runScheduled({ rate: 50, concurrency: 20, count: 40 }, async () => {
      starts.push(performance.now() - t0);
      await sleep(150);
    });
    expect(result.started).toBe(40);
    starts.forEach((at, n) => {
      expect(at, `start ${n}`).toBeGreaterThanOrEqual(n * 20 - 2);
      expect(at, `start ${n}`).toBeLessThan(n * 20 + 60);
    });
    const lastStart = starts.at(-1) ?? 0;
    expect(lastStart).toBeGreaterThan(39 * 20 - 2);
  });

  it('ends at the duration, having started duration × rate tasks', async () => {
    let started = 0;
    const t0 = performance.now();
    const result = await runScheduled({ rate: 100, concurrency: 8, durationMs: 500 }, async () => {
      started++;
      await sleep(5);
    });
    const elapsed = performance.now() - t0;
    expect(result.started).toBe(started);
    expect(started).toBeGreaterThanOrEqual(45);
    expect(started).toBeLessThanOrEqual(50);
    expect(elapsed).toBeLessThan(700);
  });

  it('starts no task due at or after the end, even when timers fire before the clock says', async () => {
    // libuv counts whole milliseconds, so a timer can fire while performance.now() still reads a
    // little before the due time. A clock running 2% slow makes that happen on every tick.
    // Trusting the wake-up started a 51st and 52nd task in a 500 ms run at 100/s.
    const t0 = performance.now();
    const slow = () => t0 + (performance.now() - t0) * 0.98;
    const starts: number[] = [];
    const result = await runScheduled(
      { rate: 50, concurrency: 10, durationMs: 200, now: slow },
      async (n) => {
        starts.push(n);
        await sleep(5);
      },
    );
    expect(result.started).toBe(10);
    expect(starts).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('never runs more than `concurrency` tasks at once, so the rate falls to what they allow', async () => {
    let running = 0;
    let most = 0;
    const result = await runScheduled({ rate: 1000, concurrency: 3, count: 15 }, async () => {
      running++;
      most = Math.max(most, running);
      await sleep(50);
      running--;
    });
    expect(most).toBe(3);
    expect(result.finishedAt - result.startedAt).toBeGreaterThanOrEqual(5 * 50 - 5);
  });

  it('a burst (no rate) keeps `concurrency` tasks in flight back to back', async () => {
    let running = 0;
    let most = 0;
    const result = await runScheduled({ concurrency: 4, count: 12 }, async () => {
      running++;
      most = Math.max(most, running);
      await sleep(30);
      running--;
    });
    expect(most).toBe(4);
    expect(result.finishedAt - result.startedAt).toBeLessThan(12 * 30);
  });

  it('stops starting tasks when aborted, and waits for the ones running', async () => {
    const stop = new AbortController();
    let finished = 0;
    const result = await runScheduled({ rate: 100, concurrency: 5, signal: stop.signal }, async (n) => {
      if (n === 9) stop.abort();
      await sleep(40);
      finished++;
    });
    expect(result.started).toBe(10);
    expect(finished).toBe(10);
  });
});
