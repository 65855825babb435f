import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './docReferences.ts';

type Manifest = {
  workspaces?: string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};

const readJson = (path: string): Manifest => JSON.parse(readFileSync(path, 'utf8')) as Manifest;

/** Each workspace folder (`apps/orders`, …) and the third-party packages it needs at run time. */
function declaredRuntimeDependencies(): Map<string, Set<string>> {
  const folders = (readJson(join(repoRoot, 'package.json')).workspaces ?? []).flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [pattern];
    const parent = pattern.slice(0, -2);
    return readdirSync(join(repoRoot, parent)).map((name) => `${parent}/${name}`);
  });
  const usedBy = new Map<string, Set<string>>();
  for (const folder of folders) {
    const manifestPath = join(repoRoot, folder, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = readJson(manifestPath);
    const names = Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies });
    for (const name of names.filter((name) => !name.startsWith('@outbox/'))) {
      usedBy.set(name, (usedBy.get(name) ?? new Set()).add(folder));
    }
  }
  return usedBy;
}

/** The "Runtime" table of docs/dependencies.md: each row's packages and its "used by" folders. */
function documentedRuntimeDependencies(): Map<string, Set<string>> {
  const doc = readFileSync(join(repoRoot, 'docs', 'dependencies.md'), 'utf8');
  const start = doc.indexOf('## Runtime');
  // The table ends where the section's first subsection (or the next section) begins.
  const ends = ['\n## ', '\n### '].map((heading) => doc.indexOf(heading, start + 1)).filter((at) => at > 0);
  const section = doc.slice(start, Math.min(...ends));
  const usedBy = new Map<string, Set<string>>();
  for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
    const [packages = '', folders = ''] = row.split('|').slice(1, 3);
    const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');
    for (const name of ticked(packages)) usedBy.set(name, new Set(ticked(folders)));
  }
  return usedBy;
}

const sorted = (map: Map<string, Set<string>>) =>
  Object.fromEntries(
    [...map].sort(([a], [b]) => a.localeCompare(b)).map(([name, set]) => [name, [...set].sort()]),
  );

describe('docs/dependencies.md', () => {
  it('lists every runtime dependency of every package.json, used by exactly the workspaces that declare it', () => {
    const declared = declaredRuntimeDependencies();
    expect(declared.size).toBeGreaterThan(10);
    expect(sorted(documentedRuntimeDependencies())).toEqual(sorted(declared));
  });
});
