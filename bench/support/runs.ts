/**
 * The benches measured over --runs runs of interleaved rounds (write-path, consumer-throughput,
 * relay-throughput). Each run is stamped with how long it took and the load around it, since the
 * machine is shared; the report gives each paired ratio's median over the runs beside every run's.
 */
import { loadavg } from './environment.ts';
import { acrossRuns, round } from './stats.ts';

/** What every run records beside its own measurements. */
export type RunStamp = { run: number; durationSec: number; loadavgBefore: number[]; loadavgAfter: number[] };

type Measured = { summary: { ratios: Record<string, number> } };

/** The part of a report the runs fill in. */
export type OverRuns<Run> = {
  runs: (RunStamp & Run)[];
  acrossRuns: Record<string, { median: number; perRun: number[] }>;
};

/** Runs `measure` once per run, each stamped, then takes each ratio's median over the runs. */
export async function measureRuns<Run extends Measured>(
  report: OverRuns<Run>,
  runs: number,
  measure: (run: number) => Promise<Run>,
  log: (message: string) => void,
): Promise<void> {
  for (let run = 1; run <= runs; run++) {
    const startedAt = Date.now();
    const loadavgBefore = loadavg();
    const measured = await measure(run);
    const durationSec = round((Date.now() - startedAt) / 1000, 1);
    report.runs.push({ run, durationSec, loadavgBefore, loadavgAfter: loadavg(), ...measured });
    log(`run ${run}: ${durationSec} s`);
  }
  report.acrossRuns = acrossRuns(report.runs.map((r) => r.summary.ratios));
}

/**
 * What the Markdown of such a report reads: its last run, a ratio's median over runs, and a note on
 * what the ratios are (`single` after one run, `many` over N runs).
 */
export function overRunsView<Run>(
  report: OverRuns<Run>,
  single: string,
  many = 'median of the per-run medians',
) {
  return {
    last: report.runs[report.runs.length - 1] as RunStamp & Run,
    ratio: (name: string) => report.acrossRuns[name]?.median,
    runsNote: report.runs.length > 1 ? `${many} over ${report.runs.length} runs` : single,
  };
}
