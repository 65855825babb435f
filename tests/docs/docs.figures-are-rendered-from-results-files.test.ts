import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FigureTable } from '../../scripts/figures/types.ts';
import { blocks, docFiles, problems, rerender } from '../../scripts/render-figures.ts';
import { repoRoot } from './docReferences.ts';

// A figure typed into a doc drifts from the run it came from (a results file re-run, a table
// copied into another page). Tables of figures are therefore rendered from bench/results by
// `npm run docs:figures`, between markers, and this test fails when a block is not what its
// results file gives today, or names a file that is not committed.

// A cell that is a measured figure: a number (or a range) with a unit of time, rate, ratio, share
// or size ("31.8 s", "0.2–0.3% of a core", "**26** ms"), or a bare number ("8.44") under a header
// that names the unit ("CPU ms per order", "% of a core").
const UNIT = String.raw`(?:ms|µs|s|[a-z]*/s|×|%|MiB|KiB|GiB|B)(?![\w])`;
const NUMBER = String.raw`[~<>≤≥]?\s*\d[\d,.]*(?:\s*[–/-]\s*\d[\d,.]*)*`;
const FIGURE_CELL = new RegExp(`^${NUMBER}\\s*${UNIT}`);
const BARE_NUMBER = new RegExp(`^${NUMBER}(?:\\s*\\(.*\\))?$`);
const UNIT_HEADER = /\b(?:ms|µs|MiB|KiB|GiB|per order|per second|seconds?|bytes)\b|%|\/s\b/;
// A column of configured values (a container's memory limit), not of measurements.
const SETTING_HEADER = /\b(?:limit|default|setting)\b/i;

const cellsOf = (line: string) =>
  line
    .split('|')
    .slice(1, -1)
    .map((cell) => cell.trim().replaceAll('**', ''));

/** `docs/benchmarks.md:22` for the first figure of each markdown table outside a figures block. */
function typedFigureTables(file: string): string[] {
  const found: string[] = [];
  let inBlock = false;
  let header: string[] | undefined;
  let reported = false;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, index) => {
      if (line.startsWith('<!-- figures:')) inBlock = true;
      if (line.startsWith('<!-- /figures -->')) inBlock = false;
      if (!line.startsWith('|')) {
        header = undefined;
        return;
      }
      if (!header) {
        header = cellsOf(line);
        reported = false;
        return;
      }
      if (inBlock || reported) return;
      const figure = cellsOf(line).some((cell, column) => {
        const heading = header?.[column] ?? '';
        if (SETTING_HEADER.test(heading)) return false;
        return FIGURE_CELL.test(cell) || (BARE_NUMBER.test(cell) && UNIT_HEADER.test(heading));
      });
      if (figure) {
        found.push(`${relative(repoRoot, file)}:${index + 1}`);
        reported = true;
      }
    });
  return found;
}

describe('the tables of figures in the docs are rendered from committed results', () => {
  const found = docFiles().flatMap((file) => blocks(file, readFileSync(file, 'utf8')));

  it('every figures block in README.md and docs/**/*.md is what its results files give now', () => {
    expect(found.length).toBeGreaterThan(5);
    expect(problems(found)).toEqual([]);
  });

  it('the figures in sentences that drifted once are rendered: capacity, relay beside Debezium, overload', () => {
    const ids = new Set(found.map((block) => block.id));
    for (const id of [
      'scaling-today',
      'relay-vs-debezium-one-relay-batch-1000',
      'accepted-at-one-and-a-half',
    ]) {
      expect(ids, id).toContain(id);
    }
  });

  it('the tables that drifted once are rendered: relay, consumer, overload, polling or CDC, the headline', () => {
    const ids = new Set(found.map((block) => block.id));
    for (const id of [
      'relay-throughput',
      'consumer-throughput',
      'overload',
      'polling-or-cdc',
      'system-capacity',
    ]) {
      expect(ids, id).toContain(id);
    }
  });

  it('README.md and docs/**/*.md hold no table of figures typed by hand', () => {
    expect(docFiles().flatMap(typedFigureTables)).toEqual([]);
  });

  describe('the checker itself', () => {
    const root = mkdtempSync(join(tmpdir(), 'doc-figures-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    mkdirSync(join(root, 'bench', 'results', 'rate'), { recursive: true });
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'bench/results/rate/rate.json'), JSON.stringify({ perSecond: 6734 }));
    const figures: Record<string, FigureTable> = {
      rate: {
        sources: ['bench/results/rate/rate.json'],
        render: ({ read, link }) =>
          `${read<{ perSecond: number }>('bench/results/rate/rate.json').perSecond}/s, ${link('bench/results/rate/rate.json')}`,
      },
      gone: { sources: ['bench/results/gone/gone.json'], render: () => 'never' },
    };
    const doc = join(root, 'docs', 'doc.md');

    it('renders a block with a link from the doc to its file, and reports a stale one', () => {
      const stale = 'a\n<!-- figures:rate -->\n1,003/s\n<!-- /figures -->\n';
      const fresh = rerender(doc, stale, root, figures);
      expect(fresh).toBe(
        'a\n<!-- figures:rate -->\n6734/s, [`bench/results/rate/rate.json`](../bench/results/rate/rate.json)\n<!-- /figures -->\n',
      );
      expect(problems(blocks(doc, fresh, root, figures), root)).toEqual([]);
      expect(problems(blocks(doc, stale, root, figures), root)).toEqual([
        'docs/doc.md:2 rate: differs from its results (npm run docs:figures)',
      ]);
    });

    it('renders a figure marked inside a sentence in place, and reports one that disagrees with its file', () => {
      const stale = 'It took <!-- figure:rate -->1,003/s<!-- /figure --> at most.\n';
      const fresh = rerender(doc, stale, root, figures);
      expect(fresh).toBe(
        'It took <!-- figure:rate -->6734/s, [`bench/results/rate/rate.json`](../bench/results/rate/rate.json)<!-- /figure --> at most.\n',
      );
      expect(problems(blocks(doc, fresh, root, figures), root)).toEqual([]);
      expect(problems(blocks(doc, stale, root, figures), root)).toEqual([
        'docs/doc.md:1 rate: differs from its results (npm run docs:figures)',
      ]);
    });

    it('refuses a figure in a sentence that renders more than one line', () => {
      const tall: Record<string, FigureTable> = { tall: { sources: [], render: () => 'a\nb' } };
      const [found] = blocks(doc, 'x <!-- figure:tall -->a<!-- /figure -->\n', root, tall);
      expect(String(found?.rendered)).toContain('renders more than one line');
    });

    it('reports a table with no results file and a name it does not know', () => {
      const text = '<!-- figures:gone -->\n<!-- /figures -->\n\n<!-- figures:typo -->\n<!-- /figures -->\n';
      expect(problems(blocks(doc, text, root, figures), root)).toEqual([
        'docs/doc.md:1 gone: "gone" has no results file: bench/results/gone/gone.json',
        'docs/doc.md:4 typo: no figure table named "typo" in scripts/figures/index.ts',
      ]);
    });

    it('finds a typed table of figures outside the blocks, not one inside or one without figures', () => {
      const file = join(root, 'typed.md');
      writeFileSync(
        file,
        [
          '| a | b |',
          '| - | - |',
          '| x | 1,003 events/s |',
          '',
          '<!-- figures:rate -->',
          '| a | 12 ms |',
          '| - | ----- |',
          '| b | 13 ms |',
          '<!-- /figures -->',
          '',
          '| process | CPU ms per order |',
          '| ------- | ---------------- |',
          '| orders  | 8.44             |',
          '',
          '| idle demo | % of a core |',
          '| --------- | ----------- |',
          '| all       | **3.62** (Kafka JVM 1.88) |',
          '',
          '| variable | what |',
          '| -------- | ---- |',
          '| `PORT` | the port, e.g. 3000 |',
          '| `RELAY_LINGER_MS` | waits 25 ms after a NOTIFY |',
          '',
          '| service | memory limit |',
          '| ------- | ------------ |',
          '| kafka   | 512 MiB      |',
        ].join('\n'),
      );
      expect(typedFigureTables(file).map((where) => where.replace(/^.*typed/, 'typed'))).toEqual([
        'typed.md:3',
        'typed.md:13',
        'typed.md:17',
      ]);
    });
  });
});
