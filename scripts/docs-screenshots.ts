// npm run docs:screenshots [-- <picture.png> ...] — the pictures of the docs, taken again by the
// console's browser tests. Every image a doc links under docs/images/ is a screenshot one of
// apps/console/test/*.test.ts takes (into test-results/screenshots/, which git ignores); this runs
// just those test files against a real stack and copies the pictures the docs use into
// docs/images/, to be committed. Name pictures to take only those (and run only their tests).
// Needs what the browser tests need: PostgreSQL, Java and Maven for the broker, Debian's chromium.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { launchBrowser } from '../apps/console/test/browser.ts';
import { docFiles, relativeLinks, repoRoot } from '../tests/docs/docReferences.ts';

const imagesDir = join(repoRoot, 'docs', 'images');
const screenshotsDir = join(repoRoot, 'test-results', 'screenshots');
const testsDir = join(repoRoot, 'apps', 'console', 'test');

const linked = new Set(
  docFiles()
    .flatMap(relativeLinks)
    .filter((link) => link.image && resolve(dirname(link.file), link.target).startsWith(`${imagesDir}/`))
    .map((link) => basename(link.target)),
);
const asked = process.argv.slice(2);
const unknown = asked.filter((picture) => !linked.has(picture));
if (unknown.length > 0) {
  console.error(`no doc links docs/images/${unknown.join(', docs/images/')}`);
  process.exit(64);
}
const wanted = (asked.length > 0 ? asked : [...linked]).sort();

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
const started = Date.now();
// One file at a time, each with a whole stack of its own: on a small machine seven stacks at once
// are slower than seven in a row, and their start-up can outlast the hooks' usual timeout.
const run = spawnSync('npx', ['vitest', 'run', '--no-file-parallelism', '--hookTimeout=300000', ...files], {
  cwd: repoRoot,
  stdio: 'inherit',
});

/** GitHub shows a picture at most about 880 px wide: wider ones are scaled down to that. */
const DOC_WIDTH = 880;

/** The PNG's width, from its IHDR chunk. */
const pngWidth = (path: string) => readFileSync(path).readUInt32BE(16);

// A picture taken before a later step of its test failed is as good as any: use every fresh one.
// The tests take them 1,400 px wide, full page; Chromium itself scales them down to what a reader
// sees anyway, which makes them a third of the size.
mkdirSync(imagesDir, { recursive: true });
const missing: string[] = [];
const browser = await launchBrowser();
for (const image of wanted) {
  const taken = join(screenshotsDir, image);
  const target = join(imagesDir, image);
  if (!existsSync(taken) || statSync(taken).mtimeMs < started) {
    missing.push(`${image} (${takenBy.get(image)})`);
    continue;
  }
  if (pngWidth(taken) <= DOC_WIDTH) copyFileSync(taken, target);
  else {
    const page = await browser.newPage({ viewport: { width: DOC_WIDTH, height: 600 } });
    await page.setContent(
      `<body style="margin:0"><img src="data:image/png;base64,${readFileSync(taken).toString('base64')}" style="width:${DOC_WIDTH}px;display:block"></body>`,
    );
    await page.locator('img').screenshot({ path: target });
    await page.close();
  }
  console.log(`docs/images/${image} (${Math.round(statSync(target).size / 1024)} KiB)`);
}
await browser.close();
if (missing.length > 0 || run.status !== 0) {
  console.error(`not taken this time, left as they were:\n  ${missing.join('\n  ') || '(none)'}`);
  process.exit(1);
}
