import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

// scripts/prerequisites.sh, sourced by ./dev: Java and Maven are required (prerequisites.missing-java-
// or-maven-is-one-line.test.ts), what the command asks for
// in optional_tools (Prometheus for the demo) is installed when it may be and otherwise named, with
// the command that installs it, while the demo goes on without it. Run here with a PATH holding
// only the tools the case needs, so "not installed" and "apt-get unavailable" are real.
const repoRoot = resolve(import.meta.dirname, '../../..');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function pathWith(tools: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'prerequisites-'));
  dirs.push(dir);
  for (const tool of tools) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    if (!found) throw new Error(`${tool} is not on this machine's PATH`);
    symlinkSync(found, join(dir, tool));
  }
  return dir;
}

function prerequisites(path: string, optionalTools: string) {
  const bash = spawnSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8' }).stdout.trim();
  return spawnSync(
    bash,
    [
      '--norc',
      '--noprofile',
      '-c',
      `optional_tools="${optionalTools}"; source scripts/prerequisites.sh; echo carried-on`,
    ],
    {
      cwd: repoRoot,
      env: { PATH: path },
      encoding: 'utf8',
    },
  );
}

const basics = ['java', 'mvn', 'sed', 'head', 'ls', 'id'];

describe('./dev prerequisites', () => {
  it('names Prometheus and the command that installs it when it is missing and cannot be installed, and carries on', () => {
    const run = prerequisites(pathWith(basics), 'prometheus');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('carried-on');
    expect(run.stderr).toContain('no prometheus here, so the console will have no charts or alerts');
    expect(run.stderr).toContain('sudo apt-get install -y prometheus');
  });

  it('says nothing when Prometheus is there', () => {
    const run = prerequisites(pathWith([...basics, 'prometheus']), 'prometheus');
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
  });
});
