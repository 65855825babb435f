/// <reference lib="dom" />
// Takes one picture of the docs: the element the text beside it is about, not the whole page, and
// notes which of the console's banners ("Prometheus is not running", "No trace backend", the lost
// connection) the picture shows, read from the page at that moment. docs/images/manifest.json
// keeps those notes; tests/docs checks that a doc showing a banner says why.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { repoRoot } from '../../tests/docs/docReferences.ts';

const imagesDir = join(repoRoot, 'docs', 'images');
const manifestPath = join(imagesDir, 'manifest.json');

/** Picture name → the banners visible in it. */
export type Manifest = Record<string, { banners: string[] }>;

export function readManifest(): Manifest {
  try {
    return JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  } catch {
    return {};
  }
}

/** One entry per picture, laid out as the repository's formatter (Biome) lays out JSON. */
export function writeManifest(manifest: Manifest): void {
  const entries = Object.entries(manifest)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, { banners }]) => {
      const list = banners.map((banner) => JSON.stringify(banner)).join(', ');
      return `  ${JSON.stringify(name)}: {\n    "banners": [${list}]\n  }`;
    });
  writeFileSync(manifestPath, `{\n${entries.join(',\n')}\n}\n`);
}

type Box = { x: number; y: number; width: number; height: number };

/** The elements' box in page coordinates (not the viewport's): what a full-page clip takes. */
async function boxOf(elements: Locator[]): Promise<Box> {
  const boxes = await Promise.all(
    elements.map((element) =>
      element.evaluate((target) => {
        const r = target.getBoundingClientRect();
        return {
          left: r.left + window.scrollX,
          top: r.top + window.scrollY,
          right: r.right + window.scrollX,
          bottom: r.bottom + window.scrollY,
        };
      }),
    ),
  );
  const left = Math.min(...boxes.map((b) => b.left));
  const top = Math.min(...boxes.map((b) => b.top));
  const right = Math.max(...boxes.map((b) => b.right));
  const bottom = Math.max(...boxes.map((b) => b.bottom));
  return { x: left, y: top, width: right - left, height: bottom - top };
}

/**
 * The banners a reader sees inside `box`: each visible `[data-missing]` box (named by what is
 * missing) and the header's connection warning when it says something.
 */
async function bannersIn(page: Page, box: Box): Promise<string[]> {
  return page.evaluate((clip) => {
    const inside = (other: Element) => {
      const r = other.getBoundingClientRect();
      const top = r.top + window.scrollY;
      const left = r.left + window.scrollX;
      return (
        r.width > 0 &&
        r.height > 0 &&
        top + r.height > clip.y &&
        top < clip.y + clip.height &&
        left + r.width > clip.x &&
        left < clip.x + clip.width
      );
    };
    const banners = [...document.querySelectorAll<HTMLElement>('[data-missing]')]
      .filter((banner) => !banner.hidden && inside(banner))
      .map((banner) => banner.dataset.missing ?? 'missing');
    const connection = document.getElementById('connection');
    if (connection?.textContent?.trim() && inside(connection)) banners.push('connection');
    return [...new Set(banners)].sort();
  }, box);
}

/**
 * Screenshots what `elements` cover (one element, or the box around several) into
 * docs/images/<name>.png and records the banners in it in `manifest`.
 */
export async function capture(
  manifest: Manifest,
  elements: Locator | Locator[],
  name: string,
): Promise<void> {
  const list = Array.isArray(elements) ? elements : [elements];
  const [first] = list;
  if (!first) throw new Error(`nothing to capture for ${name}`);
  await first.scrollIntoViewIfNeeded();
  const page = first.page();
  const path = join(imagesDir, `${name}.png`);
  // The console redraws every few seconds, and a list above (the alerts) can grow between the
  // measure and the shot: take it again until the box has not moved.
  let box = await boxOf(list);
  for (let attempt = 0; attempt < 5; attempt++) {
    await page.screenshot({ path, fullPage: true, clip: box, animations: 'disabled' });
    const after = await boxOf(list);
    if (JSON.stringify(after) === JSON.stringify(box)) break;
    box = after;
  }
  const banners = await bannersIn(page, box);
  manifest[`${name}.png`] = { banners };
  const kib = Math.round(statSync(path).size / 1024);
  console.log(
    `docs/images/${name}.png (${kib} KiB)${banners.length ? `, banners: ${banners.join(', ')}` : ''}`,
  );
}
