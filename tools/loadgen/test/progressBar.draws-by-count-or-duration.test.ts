import { describe, expect, it } from 'vitest';
import { completion, progressLine } from '../src/progressBar.ts';
import type { LoadProgress } from '../src/runLoad.ts';

const progress = (more: Partial<LoadProgress>): LoadProgress => ({
  sent: 50,
  accepted: 45,
  shed: 0,
  rejected: 3,
  inFlight: 2,
  retries: 1,
  elapsedMs: 2_500,
  rate: 20,
  ...more,
});

describe('progress bar', () => {
  it('is as far as the count or the duration, whichever is further along', () => {
    expect(completion(progress({ count: 200 }))).toBe(0.25);
    expect(completion(progress({ durationMs: 5_000 }))).toBe(0.5);
    expect(completion(progress({ count: 200, durationMs: 5_000 }))).toBe(0.5);
    expect(completion(progress({}))).toBeUndefined();
  });

  it('draws the bar and the counters on one line', () => {
    const line = progressLine(progress({ count: 100 }), true);
    expect(line).toBe(
      '[████████████░░░░░░░░░░░░]  50%  sent 50  accepted 45  shed 0  rejected 3  in flight 2  retries 1  20.0/s  2.5 s',
    );
    expect(progressLine(progress({ count: 100 }), false)).toMatch(/^ 50% +sent 50 /);
  });
});
