import { describe, expect, it } from 'vitest';
import { nextRate, record, type SearchState, type StepMeasurement, verdict } from './capacitySearch.ts';

const step = (overrides: Partial<StepMeasurement> = {}): StepMeasurement => ({
  offeredRate: 100,
  achievedRate: 100,
  p99Ms: 400,
  pendingAtEnd: 20,
  settled: true,
  ...overrides,
});

describe('the sustained verdict', () => {
  it('holds for a step that kept the pace, stayed under 1 s and settled', () => {
    expect(verdict(step())).toEqual({ sustained: true, reasons: [] });
  });

  it.each([
    ['the API fell behind the asked rate', step({ achievedRate: 90 }), /accepted 90\.0\/s of 100\/s/],
    ['p99 above 1 s', step({ p99Ms: 1200 }), /p99 1200 ms > 1000 ms/],
    ['p99 unmeasured (no order decided)', step({ p99Ms: Number.NaN }), /p99 NaN ms/],
    ['more than a second of orders waiting', step({ pendingAtEnd: 101 }), /101 orders pending/],
    ['orders left undecided', step({ settled: false }), /did not settle/],
  ])('fails when %s', (_, measured, reason) => {
    const result = verdict(measured);
    expect(result.sustained).toBe(false);
    expect(result.reasons.join('; ')).toMatch(reason);
  });
});

describe('the rate search', () => {
  const limits = { start: 25, max: 1600, resolution: 0.1 };

  /** Runs the search against a system whose true capacity is `capacity` orders/s. */
  function search(capacity: number): { rates: number[]; best?: number } {
    let state: SearchState = {};
    const rates: number[] = [];
    for (let rate = nextRate(state, limits); rate !== undefined; rate = nextRate(state, limits)) {
      rates.push(rate);
      state = record(state, rate, rate <= capacity);
    }
    return { rates, best: state.best };
  }

  it('doubles while rates hold, then bisects to within 10% of the capacity', () => {
    const { rates, best } = search(430);
    expect(rates.slice(0, 6)).toEqual([25, 50, 100, 200, 400, 800]);
    expect(best).toBeLessThanOrEqual(430);
    expect(best).toBeGreaterThanOrEqual(430 * 0.9);
    expect(rates.length).toBeLessThan(12);
  });

  it('stops at the maximum when everything holds', () => {
    const { rates, best } = search(10_000);
    expect(best).toBe(1600);
    expect(Math.max(...rates)).toBe(1600);
  });

  it('halves below the first rate when even that fails', () => {
    const { rates, best } = search(7);
    expect(rates.slice(0, 3)).toEqual([25, 12, 6]);
    expect(best).toBeGreaterThanOrEqual(6);
    expect(best).toBeLessThanOrEqual(7);
  });
});
