// What every results file under bench/results records about the run that wrote it, so that a
// figure read months later can be checked: which code (and whether the tree had edits), when,
// on what CPU, how busy the machine was before and after, and whether tracing was on. The
// benchmarks (bench/support/environment.ts) and the chaos runner (tools/chaos) both take it from
// here, and tests/docs refuses a results file added without it.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { repoRoot } from './paths.ts';

export type RunRecord = {
  /** The commit checked out when the run started (short hash); null outside a git checkout. */
  revision: string | null;
  /** Whether the tracked files were that commit's when the run started; null when unknown. */
  clean: boolean | null;
  startedAt: string;
  finishedAt: string;
  cpuModel: string;
  cpus: number;
  /** The 1, 5 and 15 minute load averages when the run started, and when it finished. */
  loadBefore: number[];
  loadAfter: number[];
  /** `off`, `on`, or what each variant had ("sampled to Zipkin in shipped, off in current"). */
  tracing: string;
};

/** The fields a results file must hold, in its json's `run` (tests/docs checks them). */
export const RUN_RECORD_FIELDS = [
  'revision',
  'clean',
  'startedAt',
  'finishedAt',
  'cpuModel',
  'loadBefore',
  'loadAfter',
  'tracing',
] as const satisfies readonly (keyof RunRecord)[];

const loads = () => os.loadavg().map((value) => Math.round(value * 100) / 100);

function git(...args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: 'pipe' }).trim();
  } catch {
    return undefined;
  }
}

type RunStart = {
  readonly started: Omit<RunRecord, 'finishedAt' | 'loadAfter' | 'tracing'>;
  /** The record, once the run is over: the end time and load now, and the tracing the run had. */
  finish(tracing: string): RunRecord;
};

/**
 * Call when the run starts, before anything it measures: the revision is read now, so a commit
 * made while the run goes on (its results, say) is never taken for the code it ran.
 */
export function startRun(): RunStart {
  const revision = git('rev-parse', '--short', 'HEAD') ?? null;
  // Results files are left out: a series of runs writes each one's results into the tree before
  // the next starts, which changes no code it runs.
  const status = revision
    ? git('status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results')
    : undefined;
  const started = {
    revision,
    clean: status === undefined ? null : status === '',
    startedAt: new Date().toISOString(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    cpus: os.cpus().length,
    loadBefore: loads(),
  };
  return {
    started,
    finish: (tracing) => ({ ...started, finishedAt: new Date().toISOString(), loadAfter: loads(), tracing }),
  };
}

/** The record as one line of a results file's markdown. */
export function runRecordLine(run: RunRecord): string {
  const code = run.revision
    ? `revision \`${run.revision}\` (${run.clean === null ? 'tree state unknown' : run.clean ? 'clean tree' : 'with uncommitted changes'})`
    : 'revision unknown';
  const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(' / ');
  return (
    `Run: ${code}, ${run.startedAt} to ${run.finishedAt}, ${run.cpuModel} × ${run.cpus}, ` +
    `load average (1 / 5 / 15 min) ${load(run.loadBefore)} before, ${load(run.loadAfter)} after, tracing ${run.tracing}.`
  );
}
