/** A source of uniform numbers in [0, 1); seeded, so a run's mix and contents can be repeated. */
export type Random = () => number;

/**
 * mulberry32: a tiny, fast 32-bit generator, good enough to pick order kinds and quantities
 * (not for anything secret). The same seed always yields the same sequence.
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max], both included. */
export function randomInt(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** One of `items`, picked with probability proportional to `weight(item)`. */
export function pickWeighted<T>(random: Random, items: readonly T[], weight: (item: T) => number): T {
  const total = items.reduce((sum, item) => sum + weight(item), 0);
  let target = random() * total;
  for (const item of items) {
    target -= weight(item);
    if (target < 0 && weight(item) > 0) return item;
  }
  // Only reached through floating-point rounding at the very top of the range.
  const last = items.findLast((item) => weight(item) > 0);
  if (last === undefined) throw new Error('pickWeighted: every weight is zero');
  return last;
}
