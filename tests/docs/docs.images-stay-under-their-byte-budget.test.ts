import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './docReferences.ts';

// A picture in the docs shows the panel the text is about, cropped to it: a whole-page shot is
// mostly what the reader is not meant to look at, and weighs on every clone of the repository.
// The cropped pictures of the console take 30–120 KiB.
const BUDGET_BYTES = 150 * 1024;

// Whole-page shots taken before the pictures were cropped, each over the budget. They leave this
// list when they are retaken (`npm run docs:screenshots`); the list only shrinks.
const UNCROPPED_KNOWN = new Set([
  'console-broker-restarted.png',
  'console-broker-stopped.png',
  'console-inventory-killed.png',
  'console-naive-write-lost-orders.png',
  'console-order-cancelled.png',
  'console-order-confirmed.png',
  'console-order-form-errors.png',
  'console-outbox-write-none-lost.png',
  'console-poison-dead-lettered.png',
  'console-poison-on-dead-letter-topic.png',
  'console-without-prometheus-and-zipkin.png',
]);

const imagesDir = join(repoRoot, 'docs', 'images');
const images = readdirSync(imagesDir).map((name) => ({ name, bytes: statSync(join(imagesDir, name)).size }));
const kib = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;

describe(`every picture in docs/images is under ${kib(BUDGET_BYTES)}`, () => {
  it('every picture not on the known list is within the budget', () => {
    expect(images.length).toBeGreaterThan(3);
    const over = images.filter(({ name, bytes }) => bytes > BUDGET_BYTES && !UNCROPPED_KNOWN.has(name));
    expect(over.map(({ name, bytes }) => `${name}: ${kib(bytes)}`)).toEqual([]);
  });

  it('the known list names only pictures that exist and are still over the budget', () => {
    const stale = [...UNCROPPED_KNOWN].filter((name) => {
      const image = images.find((candidate) => candidate.name === name);
      return image === undefined || image.bytes <= BUDGET_BYTES;
    });
    expect(stale).toEqual([]);
  });
});
