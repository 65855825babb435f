// Which results files record their own run, and which are listed in bench/results/RUNS.json.
//
// Every writer records its run (tools/devstack/src/runRecord.ts) since RECORDED_SINCE. The files
// written before then are described in RUNS.json: for each field, the value the file itself gives,
// or one inferred from git (and said to be), or null. That list is closed: a results file committed
// after RECORDED_SINCE must carry its own record, and tests/docs checks both.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RUN_RECORD_FIELDS } from '@outbox/devstack/run-record';
import { resultsKey } from '../bench/support/results.ts';

/** From this moment on, every results file records its run itself (the writers do it since then). */
export const RECORDED_SINCE = '2026-11-29T05:00:00Z';

const root = resolve(import.meta.dirname, '..');
const results = join(root, 'bench', 'results');
export const RUNS_INDEX = join(results, 'RUNS.json');

export type Field<T> = { value: T | null; from: string };
export type LegacyRecord = {
  revision: Field<string>;
  clean: Field<boolean>;
  date: Field<string>;
  cpuModel: Field<string>;
  loadBefore: Field<number[]>;
  loadAfter: Field<number[]>;
  tracing: Field<string>;
};

/**
 * The commit that first added each file under bench/results, with its parent and date, by its path
 * in its bench's folder (`system/system.json`): a file added before the folders were, and moved into
 * its folder since, counts as added when it was first added.
 */
export function firstAdded(): Map<string, { commit: string; parent: string; date: string }> {
  const found = new Map<string, { commit: string; parent: string; date: string }>();
  let current = { commit: '', parent: '', date: '' };
  const log = execFileSync(
    'git',
    ['log', '--no-renames', '--diff-filter=A', '--format=@%h %p %cI', '--name-only', '--', 'bench/results'],
    { cwd: root, encoding: 'utf8', stdio: 'pipe' },
  );
  for (const line of log.split('\n')) {
    if (line.startsWith('@')) {
      const [commit = '', parent = '', date = ''] = line.slice(1).split(' ');
      current = { commit, parent: parent.slice(0, commit.length), date };
    } else if (line.trim()) found.set(resultsKey(line.trim()), current); // oldest last
  }
  return found;
}

/** Whether a results file holds complete run records of its own (every scenario's, in a chaos array). */
export function recordsItsRun(name: string): boolean {
  const text = readFileSync(join(results, name), 'utf8');
  if (!name.endsWith('.json')) return /^Run: /m.test(text);
  const json: unknown = JSON.parse(text);
  return (Array.isArray(json) ? json : [json]).every((item) => {
    const run = (item as { run?: unknown } | null)?.run;
    return !!run && typeof run === 'object' && RUN_RECORD_FIELDS.every((field) => field in run);
  });
}

/** The results files a record is kept for: each json, and each other file but a json's md twin. */
export function resultsFiles(): string[] {
  const names = readdirSync(results, { recursive: true, encoding: 'utf8' }).filter((name) =>
    name.includes('/'),
  );
  // A readable .md beside its .json is the same run; any other file (a .md alone, a .txt) is one.
  return names.filter((name) => !(name.endsWith('.md') && names.includes(name.replace(/\.md$/, '.json'))));
}
