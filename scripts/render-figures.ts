// npm run docs:figures [-- --check]
//
// Renders every table of figures in README.md and docs/*.md from the committed results files in
// bench/results, between its markers:
//
//   <!-- figures:relay-throughput -->
//   (written by this script)
//   <!-- /figures -->
//
// so a figure in the docs is the figure in its file. A figure inside a sentence is marked the same
// way on one line, `<!-- figure:scaling-today -->300 orders/s<!-- /figure -->`, and rendered in
// place. --check writes nothing and exits 1 when a block or a marked figure differs from what its
// results files give now (tests/docs runs the same check).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { docFiles, repoRoot } from '../tests/docs/docReferences.ts';
import { FIGURES } from './figures/index.ts';
import type { FigureTable } from './figures/types.ts';

/** README.md and every docs/**.md: the docs whose figures are rendered. */
export { docFiles };

const BLOCK = /(<!-- figures:([\w-]+) -->\n)([\s\S]*?)(<!-- \/figures -->)/g;
// A figure in a sentence: its rendering is one line, with no newline after it.
const INLINE = /(<!-- figure:([\w-]+) -->)([^\n]*?)(<!-- \/figure -->)/g;

export type Block = { file: string; id: string; line: number; written: string; rendered: string | Error };

/** One figure (a table, or a figure in a sentence) rendered for the doc it sits in; an Error when it is unknown or its results are missing. It writes no table itself: each figure writes its own with @outbox/devstack/table. */
export function renderFigure(
  id: string,
  file: string,
  root = repoRoot,
  figures = FIGURES,
  inline = false,
): string | Error {
  const figure: FigureTable | undefined = figures[id];
  if (!figure) return new Error(`no figure table named "${id}" in scripts/figures/index.ts`);
  const missing = figure.sources.filter((source) => !existsSync(join(root, source)));
  if (missing.length > 0) return new Error(`"${id}" has no results file: ${missing.join(', ')}`);
  try {
    const text = (path: string): string => {
      if (!figure.sources.includes(path)) throw new Error(`"${id}" reads ${path} without declaring it`);
      return readFileSync(join(root, path), 'utf8');
    };
    const rendered = figure.render({
      read: <T>(path: string): T => JSON.parse(text(path)) as T,
      text,
      link: (path) => `[\`${path}\`](${relative(dirname(file), join(root, path))})`,
    });
    if (inline && rendered.includes('\n'))
      throw new Error(`"${id}" renders more than one line in a sentence`);
    return inline ? rendered : `${rendered}\n`;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** Every figures block and marked figure of a markdown text, as written and as rendered now. */
export function blocks(file: string, text: string, root = repoRoot, figures = FIGURES): Block[] {
  return [BLOCK, INLINE].flatMap((pattern) =>
    [...text.matchAll(pattern)].map((match) => ({
      file,
      id: match[2] ?? '',
      line: text.slice(0, match.index).split('\n').length,
      written: match[3] ?? '',
      rendered: renderFigure(match[2] ?? '', file, root, figures, pattern === INLINE),
    })),
  );
}

/** The text with every block replaced by its rendering (blocks that fail to render are left alone). */
export function rerender(file: string, text: string, root = repoRoot, figures = FIGURES): string {
  const renderAll = (source: string, pattern: RegExp) =>
    source.replace(pattern, (whole, open: string, id: string, _written: string, close: string) => {
      const rendered = renderFigure(id, file, root, figures, pattern === INLINE);
      return rendered instanceof Error ? whole : `${open}${rendered}${close}`;
    });
  return renderAll(renderAll(text, BLOCK), INLINE);
}

/** `docs/x.md:12 relay-throughput: …` for each block that is stale or cannot be rendered. */
export function problems(found: Block[], root = repoRoot): string[] {
  return found.flatMap((block) => {
    const where = `${relative(root, block.file)}:${block.line} ${block.id}`;
    if (block.rendered instanceof Error) return [`${where}: ${block.rendered.message}`];
    return block.rendered === block.written
      ? []
      : [`${where}: differs from its results (npm run docs:figures)`];
  });
}

function main(): void {
  const check = process.argv.includes('--check');
  const files = docFiles();
  const found = files.flatMap((file) => blocks(file, readFileSync(file, 'utf8')));
  if (!check) {
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const next = rerender(file, text);
      if (next !== text) writeFileSync(file, next);
    }
  }
  const left = problems(check ? found : files.flatMap((file) => blocks(file, readFileSync(file, 'utf8'))));
  console.log(`${found.length} figure tables in ${files.length} docs`);
  for (const problem of left) console.error(problem);
  if (left.length > 0) process.exitCode = 1;
}

if (import.meta.filename === process.argv[1]) main();
