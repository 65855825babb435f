// How figures are written in the docs: one place, so every rendered table reads the same.

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** 6733.8 → "6,734"; digits after the point on request; a figure a run did not record → "—". */
export function num(value: number | null | undefined, digits = 0): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  return value.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

/** 0.3527 → "0.35×". */
export function times(ratio: number, digits = 2): string {
  return `${num(ratio, digits)}×`;
}

/** 0.78 → "78%". */
export function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** An ISO timestamp → "24 November 2026" (UTC). */
export function day(iso: string): string {
  const date = new Date(iso);
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

/** The 1-minute load averages before and after a run: "load average 3.5 before, 5.2 after". */
export function load(before: number[] | undefined, after: number[] | undefined): string {
  const first = (values: number[] | undefined) => (values?.[0] === undefined ? '?' : num(values[0], 1));
  return `load average ${first(before)} before, ${first(after)} after`;
}

/** Clauses joined with "; " as one sentence: a capital first, a full stop last. */
export function sentence(clauses: string[]): string {
  const text = clauses.join('; ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** "Run 1: <link>, 24 November 2026, load average 0.5 before, 0.7 after. Run 2: …", one per run file. */
export function runsCaption(
  paths: readonly string[],
  runs: { date: string; loadavg: { before: number[]; after: number[] } }[],
  link: (path: string) => string,
): string {
  return runs
    .map(
      (run, i) =>
        `Run ${i + 1}: ${link(paths[i] ?? '')}, ${day(run.date)}, ${load(run.loadavg.before, run.loadavg.after)}.`,
    )
    .join(' ');
}

/** A benchmark's duration flag as written ("20s") → "20 s". */
export function duration(flag: string | undefined): string {
  return flag === undefined ? '?' : flag.replace(/^(\d+(?:\.\d+)?)(ms|s|m|h)$/, '$1 $2');
}

/** The spread of a figure over runs: [0.121, 0.116] → "0.12"; [7.75, 8.17] with 1 digit → "7.8–8.2". */
export function range(values: number[], digits = 0): string {
  const [low, high] = [num(Math.min(...values), digits), num(Math.max(...values), digits)];
  return low === high ? low : `${low}–${high}`;
}

/** The spread of 1-minute load averages, both ends always: [0.3, 1.2, 0.8] → "0.3–1.2". */
export function loadSpread(loads: number[]): string {
  return `${num(Math.min(...loads), 1)}–${num(Math.max(...loads), 1)}`;
}

/** The 1-minute load average at the start and at the end of each run, from its run record. */
export function loadsOf(runs: { run: { loadBefore?: number[]; loadAfter?: number[] } }[]): number[] {
  return runs.flatMap(({ run }) => [run.loadBefore?.[0] ?? 0, run.loadAfter?.[0] ?? 0]);
}

/** "AMD EPYC 2 vCPU, nothing else running (load average 0.3–1.2 before and after)": where quiet runs ran. */
export function quietHost(
  machine: { cpuModel: string; cpus: number } | undefined,
  loads: number[],
  when: string,
): string {
  return `${machine?.cpuModel} ${machine?.cpus} vCPU, nothing else running (load average ${loadSpread(loads)} ${when})`;
}
