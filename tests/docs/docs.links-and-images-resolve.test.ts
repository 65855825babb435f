import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  docFiles,
  fileFunctionRows,
  headingAnchors,
  missingAnchors,
  missingFunctions,
  missingTargets,
  relativeLinks,
  repoRoot,
} from './docReferences.ts';

// A reader of the repository (GitHub, an editor, a clone) follows these links: a picture of the
// tour under an ignored folder, or a file renamed since, is broken for every one of them.
describe('the docs link only files that exist', () => {
  it('every image in README.md and docs/**/*.md is a file of the repository', () => {
    const images = docFiles()
      .flatMap(relativeLinks)
      .filter((link) => link.image);
    expect(images.length).toBeGreaterThan(10);
    expect(missingTargets(images)).toEqual([]);
  });

  it('every relative link in README.md and docs/**/*.md is a file or folder of the repository', () => {
    const links = docFiles()
      .flatMap(relativeLinks)
      .filter((link) => !link.image);
    expect(links.length).toBeGreaterThan(50);
    expect(missingTargets(links)).toEqual([]);
  });

  it('every link to a section of a markdown file names a heading that file has', () => {
    const links = docFiles().flatMap(relativeLinks);
    expect(links.filter((link) => link.anchor).length).toBeGreaterThan(20);
    expect(missingAnchors(links)).toEqual([]);
  });

  // The hop-by-hop path of an order names, at each hop, the file and the function that does it: a
  // reader greps for that name, so a function renamed or moved makes the map lie.
  it('every file and function the hop-by-hop path of an order names is in the repository', () => {
    const rows = fileFunctionRows(join(repoRoot, 'docs', 'architecture.md'), 'One order, hop by hop');
    expect(rows.flatMap((row) => row.names).length).toBeGreaterThan(40);
    expect(missingFunctions(rows)).toEqual([]);
  });

  describe('the checker itself', () => {
    const dir = mkdtempSync(join(tmpdir(), 'doc-links-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reports a missing image and a missing file by line, and ignores URLs and code', () => {
      writeFileSync(join(dir, 'present.md'), '');
      const doc = join(dir, 'doc.md');
      writeFileSync(
        doc,
        [
          '![gone](images/gone.png) and [here](present.md#a-section)',
          '[web](https://example.com/x.png), [anchor](#top), `[code](nowhere.md)`',
          '```',
          '![in a block](block.png)',
          '```',
          '[gone too](../missing/file.ts)',
        ].join('\n'),
      );
      const links = relativeLinks(doc);
      expect(links.map((link) => link.target)).toEqual([
        'images/gone.png',
        'present.md',
        'doc.md',
        '../missing/file.ts',
      ]);
      expect(missingTargets(links, dir)).toEqual([
        'doc.md:1 → images/gone.png',
        'doc.md:6 → ../missing/file.ts',
      ]);
    });

    it('knows the anchors GitHub gives headings, repeated ones included', () => {
      const doc = join(dir, 'headings.md');
      writeFileSync(
        doc,
        [
          '# Round three (24 November 2026): the claim',
          '## What the numbers say',
          '```',
          '# not a heading',
          '```',
          '## What the numbers say',
          '[a](#what-the-numbers-say-1) [b](#what-the-numbers-say-2) [c](#round-three-24-november-2026-the-claim)',
        ].join('\n'),
      );
      expect([...headingAnchors(doc)]).toEqual([
        'round-three-24-november-2026-the-claim',
        'what-the-numbers-say',
        'what-the-numbers-say-1',
      ]);
      expect(missingAnchors(relativeLinks(doc), dir)).toEqual([
        'headings.md:7 → headings.md#what-the-numbers-say-2',
      ]);
    });

    it('reports a function its file no longer declares, and a file that is gone', () => {
      writeFileSync(
        join(dir, 'code.ts'),
        [
          'export async function claimBatch(db: Db): Promise<void> {}',
          'export class Relay {',
          '  async #loop(): Promise<void> {',
          '    claimRows(deps);',
          '  }',
          '}',
          'const handler = {',
          '  applyAll: (tx, events) => apply(tx, events),',
          '};',
        ].join('\n'),
      );
      const doc = join(dir, 'hops.md');
      writeFileSync(
        doc,
        [
          '## One order, hop by hop',
          '| hop | file | function |',
          '| --- | ---- | -------- |',
          '| claim | `code.ts` | `claimBatch`, `Relay.#loop`, `applyAll` |',
          '| gone | `code.ts` | `claimRows`, `Relay.drainOnce` |',
          '| moved | `gone.ts` | `claimBatch` |',
          '## Another section',
          '| file | function |',
          '| ---- | -------- |',
          '| `code.ts` | `notChecked` |',
        ].join('\n'),
      );
      const rows = fileFunctionRows(doc, 'One order, hop by hop');
      expect(rows.map((row) => row.names)).toEqual([
        ['claimBatch', 'Relay.#loop', 'applyAll'],
        ['claimRows', 'Relay.drainOnce'],
        ['claimBatch'],
      ]);
      expect(missingFunctions(rows, dir)).toEqual([
        'hops.md:5 → code.ts has no claimRows',
        'hops.md:5 → code.ts has no Relay.drainOnce',
        'hops.md:6 → gone.ts: no such file',
      ]);
    });
  });
});
