// The relay is one engine (apps/relay/src/engine: claim → publish → mark, its publisher, its
// outcomes, its metrics and fault points) and two drivers of it, polling/ and cdc/. A driver that
// imports the other ties one mode to the other's workings; an engine that imports a driver is no
// longer what both share. Only the process shell (main.ts, processShell.ts, relayMode.ts) knows both.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSourceFiles, repoRoot, type SourceFile } from './productionCode.ts';

const RELAY = 'apps/relay/src/';
const ENGINE = `${RELAY}engine/`;
const POLLING = `${RELAY}polling/`;
const CDC = `${RELAY}cdc/`;

/** Each folder, with the folders its files may not import. */
const FORBIDDEN: [from: string, to: string[]][] = [
  [ENGINE, [POLLING, CDC]],
  [POLLING, [CDC]],
  [CDC, [POLLING]],
];

function forbiddenImports(files: Pick<SourceFile, 'path' | 'imports'>[]): string[] {
  return files.flatMap((file) => {
    const banned = FORBIDDEN.find(([from]) => file.path.startsWith(from))?.[1] ?? [];
    return file.imports
      .filter((target) => banned.some((folder) => target.startsWith(folder)))
      .map((target) => `${file.path} imports ${target}`);
  });
}

/** Any import specifier (static, dynamic, require) that names the folder: what the parser may not resolve. */
const namesFolder = (text: string, folder: 'polling' | 'cdc') =>
  new RegExp(`(?:from|import\\s*\\(?|require\\s*\\()\\s*['"][^'"]*\\b${folder}/`).test(text);

describe('the relay is one engine and two drivers', () => {
  const files = readSourceFiles([`${RELAY}**`]);
  const under = (folder: string) => files.filter((file) => file.path.startsWith(folder));

  it('reads the engine and both drivers, and sees each driver import the engine', () => {
    expect(under(ENGINE).length).toBeGreaterThan(5);
    for (const driver of [POLLING, CDC]) {
      expect(under(driver).length, driver).toBeGreaterThan(1);
      expect(
        under(driver).some((file) => file.imports.some((target) => target.startsWith(ENGINE))),
        `${driver} imports the engine`,
      ).toBe(true);
    }
  });

  it('has no import between polling/ and cdc/, and none from the engine into either', () => {
    expect(forbiddenImports(files)).toEqual([]);
  });

  it('names neither driver in an import of the other or of the engine, in any form', () => {
    const text = (file: SourceFile) => readFileSync(join(repoRoot, file.path), 'utf8');
    const crossing = [
      ...under(POLLING).filter((file) => namesFolder(text(file), 'cdc')),
      ...under(CDC).filter((file) => namesFolder(text(file), 'polling')),
      ...under(ENGINE).filter((file) => namesFolder(text(file), 'cdc') || namesFolder(text(file), 'polling')),
    ].map((file) => file.path);
    expect(crossing).toEqual([]);
  });

  it('catches each forbidden import, and lets the shell import both drivers', () => {
    expect(
      forbiddenImports([
        { path: `${CDC}cdcMode.ts`, imports: [`${POLLING}notifyListener.ts`, `${ENGINE}relay.ts`] },
        { path: `${POLLING}pollingMode.ts`, imports: [`${CDC}cdcDrain.ts`, `${RELAY}relayMode.ts`] },
        { path: `${ENGINE}relay.ts`, imports: [`${POLLING}adminRoutes.ts`, `${RELAY}config.ts`] },
        { path: `${RELAY}main.ts`, imports: [`${POLLING}pollingMode.ts`, `${CDC}cdcMode.ts`] },
      ]),
    ).toEqual([
      `${CDC}cdcMode.ts imports ${POLLING}notifyListener.ts`,
      `${POLLING}pollingMode.ts imports ${CDC}cdcDrain.ts`,
      `${ENGINE}relay.ts imports ${POLLING}adminRoutes.ts`,
    ]);
    expect(namesFolder("const m = await import('../cdc/cdcMode.ts');", 'cdc')).toBe(true);
    expect(namesFolder("import type { Relay } from '../polling/relay.ts';", 'polling')).toBe(true);
    expect(namesFolder("import { Relay } from '../engine/relay.ts'; // polling/ steps it", 'polling')).toBe(
      false,
    );
  });
});
