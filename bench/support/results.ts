/**
 * Where the committed results live: one folder per bench under bench/results, named after the bench,
 * holding that bench's files (`bench/results/system/system.quiet.json`). A bench names its folder once,
 * through these, and a figure names a file by its name alone.
 */

/** The results root, from the repository's root (benches run from there). */
export const RESULTS_DIR = 'bench/results';

/** The bench a results file belongs to: its file name's part before the first `.`. */
export function benchOf(name: string): string {
  return (name.split('/').at(-1) ?? '').split('.')[0] ?? '';
}

/** `bench/results/<bench>/<bench>`, or `…/<bench>.<label>`: the prefix a run's .json and .md share (`--out`). */
export function resultsPath(bench: string, label?: string): string {
  return `${RESULTS_DIR}/${bench}/${label === undefined ? bench : `${bench}.${label}`}`;
}

/** A results file by its name, in its bench's folder: `system.quiet.json` → `bench/results/system/system.quiet.json`. */
export function resultsFile(name: string): string {
  return `${RESULTS_DIR}/${benchOf(name)}/${name}`;
}

/** A results file's path inside bench/results (`system/system.quiet.json`): the key RUNS.json lists it by. */
export function resultsKey(name: string): string {
  return resultsFile(name.split('/').at(-1) ?? '').slice(RESULTS_DIR.length + 1);
}
