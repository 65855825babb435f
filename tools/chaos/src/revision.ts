import { startRun } from '@outbox/devstack/run-record';

/**
 * The code a run exercised: the commit, with "+changes" when the work tree differs from it, so a
 * report read later says which revision its figures belong to. Undefined outside a git checkout.
 * Read when the run starts (runner.ts), never when its report is written.
 */
export function codeRevision({ revision, clean } = startRun().started): string | undefined {
  if (!revision) return undefined;
  return clean === false ? `${revision}+changes` : revision;
}
