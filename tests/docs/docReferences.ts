import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';

/** The repository's root, from this file (tests/docs/). */
export const repoRoot = resolve(import.meta.dirname, '..', '..');

/** What a reader of the repository reads as documentation: README.md and every docs/**.md. */
export function docFiles(root = repoRoot): string[] {
  const docs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, 'docs', name));
  return [join(root, 'README.md'), ...docs.sort()];
}

export type DocLink = { file: string; line: number; target: string; image: boolean; anchor?: string };

// [text](target) and ![alt](target), with an optional "title" after the target.
const LINK = /(!?)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const FENCE = /^\s*(```|~~~)/;

/**
 * Every link and image of a markdown file that points into the repository (no URL scheme, not a
 * bare #anchor), without its #fragment. Code blocks and `inline code` are not links.
 */
export function relativeLinks(file: string): DocLink[] {
  const links: DocLink[] = [];
  let inFence = false;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, index) => {
      if (FENCE.test(text)) inFence = !inFence;
      if (inFence) return;
      for (const match of text.replace(/`[^`]*`/g, '').matchAll(LINK)) {
        const [target = '', anchor] = (match[2] ?? '').split('#');
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const link = { file, line: index + 1, target: target || basename(file), image: match[1] === '!' };
        links.push(anchor ? { ...link, anchor } : link);
      }
    });
  return links;
}

/**
 * The anchors GitHub gives a markdown file's headings: lowercased, punctuation dropped, spaces as
 * hyphens, and `-1`, `-2` … after a heading met before.
 */
export function headingAnchors(file: string): Set<string> {
  const anchors = new Set<string>();
  let inFence = false;
  for (const text of readFileSync(file, 'utf8').split('\n')) {
    if (FENCE.test(text)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = (heading[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** `docs/a.md:3 → b.md#gone` for a link into a markdown file to a heading that file does not have. */
export function missingAnchors(links: DocLink[], root = repoRoot): string[] {
  return links
    .filter((link) => link.anchor && link.target.endsWith('.md'))
    .filter((link) => {
      const path = resolve(dirname(link.file), decodeURI(link.target));
      return existsSync(path) && !headingAnchors(path).has(decodeURIComponent(link.anchor ?? ''));
    })
    .map((link) => `${relative(root, link.file)}:${link.line} → ${link.target}#${link.anchor}`);
}

/** `docs/walkthrough.md:120 → ../x.png` for a link whose file does not exist. */
export function missingTargets(links: DocLink[], root = repoRoot): string[] {
  return links
    .filter((link) => !existsSync(resolve(dirname(link.file), decodeURI(link.target))))
    .map((link) => `${relative(root, link.file)}:${link.line} → ${link.target}`);
}

export type Citation = { file: string; line: number; cited: string };

// A short or full commit hash standing alone: 7–12 hex digits with a letter and a digit, not part
// of a longer word, a path, or an id written as `0d54efeb-…` (the chaos reports' example ids).
const REVISION = /(?<![\w\-…/.])[0-9a-f]{7,12}(?![\w\-…])/g;
// bench/results/<bench>/<name>, a results file or the prefix its .json and .md share (`--out`),
// perhaps written as a shell pattern for several runs (`where-time-goes.tracing-{off,on}.md`, `…-scan*.md`).
const RESULTS = /bench\/results\/[\w.{},*/-]*[\w}*]/g;

function citations(file: string, pattern: RegExp, keep: (cited: string) => boolean): Citation[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((text, index) =>
      [...text.matchAll(pattern)]
        .map((match) => match[0])
        .filter(keep)
        .map((cited) => ({ file, line: index + 1, cited })),
    );
}

/** Every commit hash a doc cites for a figure ("measured at `c657de9`"). */
export function citedRevisions(file: string): Citation[] {
  return citations(file, REVISION, (cited) => /[a-f]/.test(cited) && /\d/.test(cited));
}

/** Every results file a doc cites (`bench/results/system/system.md`, or `bench/results/system/system` for both). */
export function citedResults(file: string): Citation[] {
  return citations(file, RESULTS, () => true);
}

/** `a-{x,y}-{1,2}` → a-x-1, a-x-2, a-y-1, a-y-2. */
export function expandBraces(pattern: string): string[] {
  const group = /\{([^{}]*)\}/.exec(pattern);
  if (!group) return [pattern];
  const [head, tail] = [pattern.slice(0, group.index), pattern.slice(group.index + group[0].length)];
  return (group[1] ?? '').split(',').flatMap((choice) => expandBraces(`${head}${choice}${tail}`));
}

/** Every name a cited pattern stands for exists, as it is or as the .json/.md pair of `--out <prefix>`. */
export function resultsExist(cited: string, root = repoRoot): boolean {
  const committed = readdirSync(join(root, 'bench', 'results'), { recursive: true, encoding: 'utf8' }).map(
    (name) => `bench/results/${name}`,
  );
  return expandBraces(cited).every((path) => {
    const glob = new RegExp(
      `^${path.replace(/[.+?^$()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}(\\.json|\\.md)?$`,
    );
    return committed.some((name) => glob.test(name)) || existsSync(join(root, path));
  });
}

export function where(citation: Citation, root = repoRoot): string {
  return `${relative(root, citation.file)}:${citation.line} → ${citation.cited}`;
}

/** A doc's paragraphs and list items, each with the line it starts on. */
export function passages(text: string): { line: number; text: string }[] {
  const found: { line: number; text: string }[] = [];
  let current: { line: number; text: string } | undefined;
  text.split('\n').forEach((line, index) => {
    const item = /^\s*([-*]|\d+\.)\s/.test(line);
    if (line.trim() === '' || item) {
      if (current) found.push(current);
      current = line.trim() === '' ? undefined : { line: index + 1, text: line };
    } else if (current) current.text += `\n${line}`;
    else current = { line: index + 1, text: line };
  });
  if (current) found.push(current);
  return found;
}

// A revision named as the one a run was at: "at revision `c657de9`", "at `c657de9`", "revision `c657de9`".
const RUN_REVISION = /\b(?:at|revision)\s+`([0-9a-f]{7,12})`/g;

/** When the run of a cited results file started, from its json (`startedAt`, `started`, a timed `date`). */
export function runStart(cited: string, root = repoRoot): number | undefined {
  const json = join(root, `${cited.replace(/\.(md|json)$/, '')}.json`);
  if (!existsSync(json)) return undefined;
  const times = [
    ...readFileSync(json, 'utf8').matchAll(/"(?:startedAt|date|started)":\s*"(\d{4}-\d\d-\d\dT[^"]+)"/g),
  ]
    .map((match) => Date.parse(match[1] ?? ''))
    .filter(Number.isFinite);
  return times.length > 0 ? Math.min(...times) : undefined;
}

/**
 * Every revision a passage names as a run's, with the latest start among the results files it
 * cites: a revision committed after that cannot be the code any of those runs checked out.
 */
export function runRevisions(file: string): (Citation & { latestStart: number })[] {
  return passages(readFileSync(file, 'utf8')).flatMap((passage) => {
    const starts = [...passage.text.matchAll(RESULTS)]
      .map((match) => runStart(match[0]))
      .filter((start) => start !== undefined);
    if (starts.length === 0) return [];
    const latestStart = Math.max(...starts);
    return [...passage.text.matchAll(RUN_REVISION)].map((match) => ({
      file,
      line: passage.line,
      cited: match[1] ?? '',
      latestStart,
    }));
  });
}

/** One row of a doc's table that names a file and the functions it holds. */
export type FileFunctions = { doc: string; line: number; file: string; names: string[] };

const backticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');
const cellsOf = (row: string) =>
  row
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|');

/**
 * Every row of the tables under the heading `section` (up to the next heading as high or higher)
 * that have a `file` and a `function` column: the backticked path in the first, the backticked
 * names in the second. A name written `Relay.drainOnce` stands for a class and its method.
 */
export function fileFunctionRows(doc: string, section: string): FileFunctions[] {
  const lines = readFileSync(doc, 'utf8').split('\n');
  const start = lines.findIndex((text) => /^#{1,6}\s/.test(text) && text.replace(/^#+\s+/, '') === section);
  if (start < 0) return [];
  const level = (/^#+/.exec(lines[start] ?? '')?.[0] ?? '#').length;
  const rows: FileFunctions[] = [];
  let columns: { file: number; function: number } | undefined;
  for (let index = start + 1; index < lines.length; index++) {
    const text = lines[index] ?? '';
    const heading = /^(#+)\s/.exec(text);
    if (heading && (heading[1] ?? '').length <= level) break;
    if (!text.startsWith('|')) {
      columns = undefined;
      continue;
    }
    const cells = cellsOf(text);
    if (/^\|[\s|:-]+$/.test(text)) continue;
    if (!columns) {
      const names = cells.map((cell) => cell.trim().toLowerCase());
      const [file, fn] = [names.indexOf('file'), names.indexOf('function')];
      columns = { file, function: fn };
      continue;
    }
    const [file] = backticked(cells[columns.file] ?? '');
    if (columns.file < 0 || columns.function < 0 || !file) continue;
    rows.push({ doc, line: index + 1, file, names: backticked(cells[columns.function] ?? '') });
  }
  return rows;
}

/** Whether `source` declares `name`: a function, class, type or const, a method, or an object's function property. */
export function declares(source: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\#]/g, '\\$&');
  return [
    new RegExp(`\\b(?:function\\*?|class|interface|type|const|let|enum)\\s+${escaped}(?![\\w$])`),
    new RegExp(
      `^\\s*(?:(?:public|private|protected|static|async|readonly|get|set|override)\\s+)*${escaped}\\s*[(<][^;\\n]*$`,
      'm',
    ),
    new RegExp(`^\\s*${escaped}\\s*:\\s*(?:async\\b|\\(|function\\b)`, 'm'),
  ].some((declaration) => declaration.test(source));
}

/** `docs/a.md:12 → src/x.ts has no claimBatch` for each name its file does not declare (or a file that is gone). */
export function missingFunctions(rows: FileFunctions[], root = repoRoot): string[] {
  return rows.flatMap(({ doc, line, file, names }) => {
    const at = `${relative(root, doc)}:${line} → ${file}`;
    const path = join(root, file);
    if (!existsSync(path)) return [`${at}: no such file`];
    const source = readFileSync(path, 'utf8');
    return names
      .filter((name) => !name.split('.').every((part) => declares(source, part)))
      .map((name) => `${at} has no ${name}`);
  });
}
