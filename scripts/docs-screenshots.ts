// npm run docs:screenshots — the pictures of the docs, taken again by the console's browser tests.
// Every image a doc links under docs/images/ is a screenshot one of apps/console/test/*.test.ts
// takes (into test-results/screenshots/, which git ignores); this runs just those test files
// against a real stack and copies the pictures the docs use into docs/images/, to be committed.
// Needs what the browser tests need: PostgreSQL, Java and Maven for the broker, Debian's chromium.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { docFiles, relativeLinks, repoRoot } from '../tests/docs/docReferences.ts';

const imagesDir = join(repoRoot, 'docs', 'images');
const screenshotsDir = join(repoRoot, 'test-results', 'screenshots');
const testsDir = join(repoRoot, 'apps', 'console', 'test');

const wanted = [
  ...new Set(
    docFiles()
      .flatMap(relativeLinks)
      .filter((link) => link.image && resolve(dirname(link.file), link.target).startsWith(`${imagesDir}/`))
      .map((link) => basename(link.target)),
  ),
].sort();

// The test that takes a picture names it: screenshot(page, 'console-order-confirmed') or
// join(screenshotDir, 'console-order-timeline-panel.png').
const tests = readdirSync(testsDir).filter((name) => name.endsWith('.test.ts'));
const takenBy = new Map(
  wanted.map((image) => {
    const name = image.replace(/\.png$/, '');
    const test = tests.find((file) => readFileSync(join(testsDir, file), 'utf8').includes(`'${name}`));
    return [image, test] as const;
  }),
);
const untaken = wanted.filter((image) => !takenBy.get(image));
if (untaken.length > 0) {
  console.error(`no test in apps/console/test takes: ${untaken.join(', ')}`);
  process.exit(1);
}

const files = [...new Set(takenBy.values())].map((file) => relative(repoRoot, join(testsDir, file ?? '')));
console.log(`${wanted.length} pictures, taken by:\n  ${files.join('\n  ')}`);
// One file at a time, each with a whole stack of its own: on a small machine seven stacks at once
// are slower than seven in a row, and their start-up can outlast the hooks' usual timeout.
const run = spawnSync('npx', ['vitest', 'run', '--no-file-parallelism', '--hookTimeout=300000', ...files], {
  cwd: repoRoot,
  stdio: 'inherit',
});
if (run.status !== 0) {
  console.error('the browser tests failed: docs/images/ left as it was');
  process.exit(run.status ?? 1);
}

mkdirSync(imagesDir, { recursive: true });
for (const image of wanted) {
  const taken = join(screenshotsDir, image);
  if (!existsSync(taken)) {
    console.error(`${image}: not written by ${takenBy.get(image)}`);
    process.exit(1);
  }
  copyFileSync(taken, join(imagesDir, image));
  console.log(`docs/images/${image} (${Math.round(statSync(taken).size / 1024)} KiB)`);
}
