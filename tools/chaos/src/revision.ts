import { execFileSync } from 'node:child_process';

/**
 * The code a run exercised: the commit, with "+changes" when the work tree differs from it, so a
 * report read later says which revision its figures belong to. Undefined outside a git checkout.
 */
export function codeRevision(): string | undefined {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', stdio: 'pipe' }).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    return git('status', '--porcelain', '--untracked-files=no') === '' ? commit : `${commit}+changes`;
  } catch {
    return undefined;
  }
}
