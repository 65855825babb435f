import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  citedResults,
  citedRevisions,
  docFiles,
  expandBraces,
  repoRoot,
  resultsExist,
  runRevisions,
  where,
} from './docReferences.ts';

/** When a commit was made. */
function committedAt(revision: string): number {
  return Date.parse(
    execFileSync('git', ['show', '-s', '--format=%cI', revision], { cwd: repoRoot, encoding: 'utf8' }).trim(),
  );
}

/** The revision exists in this repository's history (a branch's commit that was never merged does not). */
function commitExists(revision: string): boolean {
  try {
    execFileSync('git', ['cat-file', '-e', `${revision}^{commit}`], { cwd: repoRoot, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// A figure is only as good as a reader's way to reproduce it: the revision it was measured at and
// the results file it comes from must be there to check out and to read.
describe('every figure in the docs cites what a reader can find', () => {
  it('every commit hash cited in README.md and docs/**/*.md is a commit of this repository', () => {
    const revisions = docFiles().flatMap(citedRevisions);
    expect(revisions.length).toBeGreaterThan(3);
    expect(revisions.filter((citation) => !commitExists(citation.cited)).map((c) => where(c))).toEqual([]);
  });

  it('no run is said to be at a revision committed after the runs its passage cites had started', () => {
    const named = docFiles()
      .flatMap((file) => runRevisions(file))
      .filter((citation) => commitExists(citation.cited));
    expect(named.length).toBeGreaterThan(3);
    const late = named.filter((citation) => committedAt(citation.cited) > citation.latestStart);
    expect(late.map((citation) => where(citation))).toEqual([]);
  });

  it('every bench/results file cited in README.md and docs/**/*.md is committed', () => {
    const results = docFiles().flatMap(citedResults);
    expect(results.length).toBeGreaterThan(5);
    expect(results.filter((citation) => !resultsExist(citation.cited)).map((c) => where(c))).toEqual([]);
  });

  it('reads a results pattern as every file it stands for', () => {
    expect(expandBraces('a-{x,y}-{1,2}.md')).toEqual(['a-x-1.md', 'a-x-2.md', 'a-y-1.md', 'a-y-2.md']);
    expect(resultsExist('bench/results/system/system')).toBe(true);
    expect(resultsExist('bench/results/where-time-goes/where-time-goes.tracing-{off,on}.md')).toBe(true);
    expect(resultsExist('bench/results/where-time-goes/where-time-goes.tracing-{off,sideways}.md')).toBe(
      false,
    );
    expect(resultsExist('bench/results/where-time-goes/where-time-goes.claim-{bitmap,index}-scan*.md')).toBe(
      true,
    );
  });

  it('takes a revision for a run only where it is named as one, and finds one committed after its run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-revisions-'));
    try {
      const doc = join(dir, 'doc.md');
      const report = '[report](../bench/results/chaos/chaos.postgres-failover-async-unguarded.md)';
      writeFileSync(
        doc,
        `One run at revision \`3bd08ee\`, ${report}.\n\nThe fix (\`3bd08ee\`) came after ${report}.\n`,
      );
      const named = runRevisions(doc);
      expect(named.map((citation) => `${citation.line} ${citation.cited}`)).toEqual(['1 3bd08ee']);
      expect(committedAt('3bd08ee')).toBeGreaterThan(named[0]?.latestStart ?? Number.POSITIVE_INFINITY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tells a revision from what only looks like one', () => {
    expect(commitExists('HEAD')).toBe(true);
    expect(commitExists('0000000')).toBe(false);
  });
});
