import { describe, expect, it } from 'vitest';
import { percentile, summarizeLatencies } from '../src/percentiles.ts';

describe('percentiles (nearest rank)', () => {
  it('picks measured values: p50 of 1..100 is 50, p95 is 95, p99 is 99', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i); // unsorted on purpose
    expect(summarizeLatencies(values)).toEqual({ p50: 50, p95: 95, p99: 99, max: 100, count: 100 });
  });

  it('a single slow order out of ten shows in p95 and p99, not in p50', () => {
    const values = [10, 10, 10, 10, 10, 10, 10, 10, 10, 900];
    expect(summarizeLatencies(values)).toMatchObject({ p50: 10, p95: 900, p99: 900, max: 900 });
  });

  it('one value is every percentile; none is count 0', () => {
    expect(summarizeLatencies([7])).toEqual({ p50: 7, p95: 7, p99: 7, max: 7, count: 1 });
    expect(summarizeLatencies([])).toEqual({ p50: 0, p95: 0, p99: 0, max: 0, count: 0 });
    expect(percentile([], 0.5)).toBeNaN();
  });
});
