/** One invariant's verdict: what was checked (counts), and each violation with example ids. */
export type InvariantResult = {
  name: string;
  description: string;
  passed: boolean;
  /** What was counted, e.g. `{ orders: 180, events: 720 }`. */
  counts: Record<string, number>;
  /** One line per kind of violation: how many, and a few example ids. */
  violations: string[];
};

/** Collects violations by kind, keeping a few example ids of each. */
export class Violations {
  readonly #byKind = new Map<string, { count: number; examples: string[] }>();

  add(kind: string, example: string): void {
    const entry = this.#byKind.get(kind) ?? { count: 0, examples: [] };
    entry.count += 1;
    if (entry.examples.length < 3) entry.examples.push(example);
    this.#byKind.set(kind, entry);
  }

  list(): string[] {
    return [...this.#byKind].map(
      ([kind, { count, examples }]) => `${kind}: ${count} (e.g. ${examples.join(', ')})`,
    );
  }
}

export function verdict(
  name: string,
  description: string,
  counts: Record<string, number>,
  violations: Violations,
): InvariantResult {
  const list = violations.list();
  return { name, description, passed: list.length === 0, counts, violations: list };
}

/** Count of each value. */
export function tally<T>(values: Iterable<T>): Map<T, number> {
  const counts = new Map<T, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
