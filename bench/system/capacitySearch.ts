/**
 * How bench:system decides that the whole saga "sustains" a rate, and which rate to offer next.
 * Pure functions, unit-tested in capacitySearch.test.ts; the benchmark feeds them measurements.
 */

export type StepMeasurement = {
  /** Orders per second asked of the load generator. */
  offeredRate: number;
  /** Orders per second the API accepted over the step. */
  achievedRate: number;
  /** End-to-end p99 of the step's orders (created → decided, orders database), ms. */
  p99Ms: number;
  /** Orders of the step still PENDING when the load stopped. */
  pendingAtEnd: number;
  /** Every order of the step decided, and every outbox drained, within the drain deadline. */
  settled: boolean;
};

export type Criteria = {
  /** p99 must not exceed this (the 1 s). */
  maxP99Ms: number;
  /** The API must accept at least this share of the offered rate. */
  minAchievedShare: number;
  /** At most this many seconds of orders may be waiting when the load stops: more is a growing backlog. */
  maxBacklogSeconds: number;
};

export const DEFAULT_CRITERIA: Criteria = { maxP99Ms: 1000, minAchievedShare: 0.95, maxBacklogSeconds: 1 };

export type Verdict = { sustained: boolean; reasons: string[] };

/** Sustained: the API kept the pace, p99 within bounds, no backlog building up, and it all settled. */
export function verdict(step: StepMeasurement, criteria: Criteria = DEFAULT_CRITERIA): Verdict {
  const reasons: string[] = [];
  if (step.achievedRate < step.offeredRate * criteria.minAchievedShare)
    reasons.push(`API accepted ${step.achievedRate.toFixed(1)}/s of ${step.offeredRate}/s asked`);
  if (!(step.p99Ms <= criteria.maxP99Ms))
    reasons.push(`p99 ${Math.round(step.p99Ms)} ms > ${criteria.maxP99Ms} ms`);
  const backlogLimit = Math.max(1, step.offeredRate * criteria.maxBacklogSeconds);
  if (step.pendingAtEnd > backlogLimit)
    reasons.push(`${step.pendingAtEnd} orders pending when the load stopped (> ${Math.round(backlogLimit)})`);
  if (!step.settled) reasons.push('did not settle within the drain deadline');
  return { sustained: reasons.length === 0, reasons };
}

export type SearchState = {
  /** Highest rate that was sustained so far. */
  best?: number;
  /** Lowest rate that was not. */
  lowestFailure?: number;
};

/**
 * The next rate to offer, or undefined when the search is done: double from `start` while rates
 * hold, then bisect between the best sustained rate and the lowest failure until they are within
 * `resolution` (a share of the best rate) of each other. Never above `max`.
 */
export function nextRate(
  state: SearchState,
  { start, max, resolution }: { start: number; max: number; resolution: number },
): number | undefined {
  const { best, lowestFailure } = state;
  if (best === undefined) {
    if (lowestFailure === undefined) return start;
    // Even the first rate failed: halve until one holds, down to 1 order/s.
    const lower = Math.floor(lowestFailure / 2);
    return lower >= 1 ? lower : undefined;
  }
  if (lowestFailure === undefined) return best >= max ? undefined : Math.min(max, best * 2);
  if (lowestFailure - best <= Math.max(1, best * resolution)) return undefined;
  return Math.round((best + lowestFailure) / 2);
}

export function record(state: SearchState, rate: number, sustained: boolean): SearchState {
  if (sustained) return { ...state, best: Math.max(state.best ?? 0, rate) };
  return { ...state, lowestFailure: Math.min(state.lowestFailure ?? Number.POSITIVE_INFINITY, rate) };
}
