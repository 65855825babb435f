import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './docReferences.ts';

// A picture in the docs shows the panel the text is about, cropped to it: a whole-page shot is
// mostly what the reader is not meant to look at, and weighs on every clone of the repository.
// `npm run docs:screenshots` crops each picture to its panel.
const BUDGET_BYTES = 150 * 1024;

const imagesDir = join(repoRoot, 'docs', 'images');
const images = readdirSync(imagesDir).map((name) => ({ name, bytes: statSync(join(imagesDir, name)).size }));
const kib = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;

describe(`every picture in docs/images is under ${kib(BUDGET_BYTES)}`, () => {
  it('every picture is within the budget', () => {
    expect(images.length).toBeGreaterThan(3);
    const over = images.filter(({ bytes }) => bytes > BUDGET_BYTES);
    expect(over.map(({ name, bytes }) => `${name}: ${kib(bytes)}`)).toEqual([]);
  });
});
