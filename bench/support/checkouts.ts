import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The code of `revision` in a worktree of its own under `.local/bench/`, with its packages installed
 * and its Prisma clients generated (prepared once, kept for the next run); this checkout when
 * `revision` is undefined. The benches that compare revisions side by side run each from here.
 */
export function checkoutOf(revision: string | undefined, log: (message: string) => void): string {
  if (revision === undefined) return resolve('.');
  const rev = execFileSync('git', ['rev-parse', '--short', revision], { encoding: 'utf8' }).trim();
  const dir = resolve(`.local/bench/baseline-${rev}`);
  if (!existsSync(join(dir, 'node_modules'))) {
    log(`preparing ${rev} in ${dir} (git worktree, npm install, prisma generate)`);
    if (!existsSync(dir))
      execFileSync('git', ['worktree', 'add', '--detach', dir, rev], { stdio: 'inherit' });
    execFileSync('bash', ['-c', 'source scripts/setup.sh'], { cwd: dir, stdio: 'inherit' });
  }
  return dir;
}

/** The short revision a checkout holds. */
export const revisionOf = (checkout: string) =>
  execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: checkout, encoding: 'utf8' }).trim();
