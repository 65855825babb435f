import { describe, expect, it } from 'vitest';
import { backoffDelayMs, exponentialDelayMs } from '../src/backoff.ts';

const lowest = () => 0;
const highest = () => 0.999_999;

describe('backoffDelayMs (exponential backoff with full jitter)', () => {
  it('never waits less than zero', () => {
    for (let attempt = 0; attempt <= 20; attempt++) {
      expect(backoffDelayMs(attempt, 200, 30_000, lowest)).toBe(0);
    }
  });

  it('stays below min(cap, base * 2^(attempt-1)) at the top of the jitter range', () => {
    for (let attempt = 1; attempt <= 20; attempt++) {
      const ceiling = Math.min(30_000, 200 * 2 ** (attempt - 1));
      const delay = backoffDelayMs(attempt, 200, 30_000, highest);
      expect(delay).toBeLessThanOrEqual(ceiling);
      expect(delay).toBeGreaterThanOrEqual(ceiling - 1);
      expect(Number.isInteger(delay)).toBe(true);
    }
  });

  it('doubles the ceiling with each attempt', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => backoffDelayMs(attempt, 100, 1_000_000, () => 0.5))).toEqual([
      50, 100, 200, 400, 800,
    ]);
  });

  it('is capped however many attempts have failed', () => {
    expect(backoffDelayMs(9, 200, 30_000, highest)).toBe(29_999);
    expect(backoffDelayMs(1_000, 200, 30_000, highest)).toBe(29_999);
    expect(backoffDelayMs(1_000, 200, 30_000, () => 0.5)).toBe(15_000);
  });

  it('treats attempt 0 (and below) like the first attempt', () => {
    expect(backoffDelayMs(0, 200, 30_000, () => 0.5)).toBe(100);
    expect(backoffDelayMs(-3, 200, 30_000, () => 0.5)).toBe(100);
  });

  it('uses Math.random by default and stays within the first ceiling', () => {
    for (let i = 0; i < 1_000; i++) {
      const delay = backoffDelayMs(1);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(200);
    }
  });
});

describe('exponentialDelayMs (the schedule without jitter)', () => {
  it('waits base, then doubles up to the cap: the consumer connection retry 1 s, 2 s, 4 s … 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 100].map((attempt) => exponentialDelayMs(attempt, 1000, 30_000))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it('is the ceiling backoffDelayMs draws its jitter under', () => {
    for (let attempt = 0; attempt <= 12; attempt++) {
      expect(backoffDelayMs(attempt, 200, 5_000, () => 0.5)).toBe(
        Math.floor(exponentialDelayMs(attempt, 200, 5_000) / 2),
      );
    }
  });
});
