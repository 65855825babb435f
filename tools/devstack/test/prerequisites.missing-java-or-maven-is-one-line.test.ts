// ./dev on a machine without Java 17 or Maven, where it may not install them: one line naming
// what is missing and the command that installs it, and a non-zero exit; never a stack trace.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../src/paths.ts';

const bin = mkdtempSync(join(tmpdir(), 'prerequisites-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

function tool(name: string, script: string): void {
  writeFileSync(join(bin, name), `#!/bin/sh\n${script}\n`);
  chmodSync(join(bin, name), 0o755);
}
// What the script itself uses, and nothing else: no java, no mvn, no sudo that works.
for (const name of ['sed', 'head', 'ls', 'id']) symlinkSync(`/usr/bin/${name}`, join(bin, name));
tool('sudo', 'exit 1');

/** Sources scripts/prerequisites.sh as ./dev does, as a user that is not root, with PATH = bin only. */
function run(extra: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(
    '/bin/bash',
    [
      '--norc',
      '--noprofile',
      '-c',
      'id() { if [ "$1" = -u ]; then echo 1000; else command id "$@"; fi; }; source scripts/prerequisites.sh; echo passed',
    ],
    // stdin not a socket: bash would take itself for an rsh session and read ~/.bashrc.
    { cwd: repoRoot, env: { PATH: bin, ...extra }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('./dev prerequisites', () => {
  it('stop with one line naming the apt-get command when java is too old and apt-get exists', () => {
    tool('java', 'echo \'openjdk version "11.0.2" 2019-01-15\' >&2');
    tool('apt-get', 'exit 1');
    const { status, stdout, stderr } = run();
    expect(status).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(
      /^missing: openjdk-17-jre-headless.*run: sudo apt-get install -y --no-install-recommends openjdk-17-jre-headless/,
    );
  });

  it('stop with one line saying what to install where there is no apt-get', () => {
    rmSync(join(bin, 'apt-get'));
    rmSync(join(bin, 'java'));
    const { status, stderr } = run();
    expect(status).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^missing: Java 17\+ and Maven/);
  });

  it('pass when java 17+ is there (the jars are already resolved, so Maven is not needed)', () => {
    tool('java', 'echo \'openjdk version "17.0.15" 2025-04-15\' >&2');
    tool('mvn', 'exit 0');
    const { status, stdout } = run();
    expect({ status, stdout }).toEqual({ status: 0, stdout: 'passed\n' });
  });
});
