import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../src/duration.ts';

describe('durations on the command line', () => {
  it('reads ms, s, m and h, with decimals', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('1.5s')).toBe(1_500);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1h')).toBe(3_600_000);
  });

  it('refuses a bare number (seconds or milliseconds?), zero, negatives and junk', () => {
    for (const text of ['30', '0s', '-5s', '5 minutes', 's', '', '2m30s', '1e3ms']) {
      expect(parseDuration(text), text).toBeUndefined();
    }
  });

  it('formats for people', () => {
    expect(formatDuration(1234)).toBe('1.2 s');
    expect(formatDuration(90_000)).toBe('1m30s');
  });
});
