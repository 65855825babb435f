import { readdirSync, readFileSync } from 'node:fs';
import { createRequire, stripTypeScriptTypes } from 'node:module';
import { dirname, extname, join } from 'node:path';
import type { RequestHandler } from 'express';

const here = import.meta.dirname;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
};

/**
 * Libraries the page loads as they are published on npm, under /vendor/: uPlot draws the charts
 * (docs/dependencies.md). index.html's import map lets the browser code `import uPlot from 'uplot'`.
 */
const uplotDist = dirname(createRequire(import.meta.url).resolve('uplot'));
const VENDOR_FILES: Record<string, { file: string; type: string }> = {
  '/vendor/uplot.js': { file: join(uplotDist, 'uPlot.esm.js'), type: 'text/javascript; charset=utf-8' },
  '/vendor/uplot.css': { file: join(uplotDist, 'uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

/**
 * Node 24 prints "ExperimentalWarning: stripTypeScriptTypes is an experimental feature" the first
 * time it is called: the same type stripping Node runs our own code with, and nothing a reader of
 * the demo's output could act on. Node emits it through process.emitWarning, so it is held back here.
 */
function withoutExperimentalWarning<T>(action: () => T): T {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    return action();
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * The page: `public/` as is, and the browser code of `browser/` as JavaScript. The browser code
 * is TypeScript, checked by tsc against the DOM (browser/tsconfig.json), and served with its types
 * stripped the way Node itself runs TypeScript: no bundler, no build step, and what the browser
 * runs is the file you read, minus its types. Everything is read once, at startup.
 */
export function staticFiles(): RequestHandler {
  const files = new Map<string, { type: string; body: Buffer | string }>();
  for (const name of readdirSync(join(here, 'public'))) {
    const type = CONTENT_TYPES[extname(name)];
    if (type) files.set(`/${name}`, { type, body: readFileSync(join(here, 'public', name)) });
  }
  for (const name of readdirSync(join(here, 'browser'))) {
    if (extname(name) !== '.ts') continue;
    const source = readFileSync(join(here, 'browser', name), 'utf8');
    files.set(`/browser/${name}`, {
      type: 'text/javascript; charset=utf-8',
      body: withoutExperimentalWarning(() => stripTypeScriptTypes(source, { mode: 'strip' })),
    });
  }
  for (const [path, { file, type }] of Object.entries(VENDOR_FILES)) {
    files.set(path, { type, body: readFileSync(file) });
  }
  const index = files.get('/index.html');
  if (index) files.set('/', index);

  return (req, res, next) => {
    const file = req.method === 'GET' || req.method === 'HEAD' ? files.get(req.path) : undefined;
    if (!file) return next();
    res.type(file.type).set('cache-control', 'no-cache').send(file.body);
  };
}
