import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docFiles, relativeLinks, repoRoot } from './docReferences.ts';

// The console shows a banner where a backend is missing ("Prometheus is not running", "No trace
// backend") or the connection is lost. A picture that shows one beside a text about something
// else tells the reader the system is broken. `npm run docs:screenshots` reads from the page which
// banners each picture shows, into docs/images/manifest.json; a doc that shows such a picture
// must say why, in the picture's alt text or the lines just before it.

const imagesDir = join(repoRoot, 'docs', 'images');
type Manifest = Record<string, { banners: string[] }>;
const manifest = JSON.parse(readFileSync(join(imagesDir, 'manifest.json'), 'utf8')) as Manifest;

/** What a text says when it means to show the banner. */
const EXPLAINED_BY: Record<string, RegExp> = {
  prometheus: /without Prometheus|Prometheus is not running/i,
  traces: /without (Prometheus and )?Zipkin|no trace backend/i,
  connection: /connection (is )?lost|cannot reach the console/i,
};

/** How many lines before a picture count as the text about it. */
const CONTEXT_LINES = 8;

const pictures = docFiles()
  .flatMap(relativeLinks)
  .filter((link) => link.image && resolve(dirname(link.file), link.target).startsWith(`${imagesDir}/`));

describe('the pictures of the docs show no banner their text does not explain', () => {
  it('every picture in docs/images was taken by the screenshot run, which noted its banners', () => {
    const pngs = readdirSync(imagesDir).filter((name) => name.endsWith('.png'));
    expect(pngs.length).toBeGreaterThan(3);
    expect(pngs.filter((name) => !manifest[name])).toEqual([]);
  });

  it('a doc showing a picture with a banner mentions what the banner says', () => {
    expect(pictures.length).toBeGreaterThan(3);
    const unexplained = pictures.flatMap((link) => {
      const lines = readFileSync(link.file, 'utf8').split('\n');
      const context = lines.slice(Math.max(0, link.line - 1 - CONTEXT_LINES), link.line).join('\n');
      const banners = manifest[basename(link.target)]?.banners ?? [];
      return banners
        .filter((banner) => !(EXPLAINED_BY[banner] ?? /$^/).test(context))
        .map(
          (banner) =>
            `${relative(repoRoot, link.file)}:${link.line} ${link.target} shows the "${banner}" banner`,
        );
    });
    expect(unexplained).toEqual([]);
  });
});
