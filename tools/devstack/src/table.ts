// The lab's one table writer: the benches' reports, the docs' figures (scripts/figures), the load
// generator's summary. Two formats of the same table: Markdown, each column padded to its widest
// cell as the formatter keeps it (so a table written into the docs passes `biome check` as written),
// and plain text for a terminal.

export type Align = 'left' | 'right';

type TableOptions = {
  /**
   * Each column's alignment, left when not given. In Markdown a right-aligned column is padded on the
   * left and marked `--:`; with no alignments at all, the rule under the header is dashes only.
   */
  align?: readonly Align[];
};

type Cells = readonly (readonly string[])[];

/** Every row with exactly the header's columns (a missing cell is empty; cells past the header are left out). */
const fitted = (header: readonly string[], rows: Cells, cell: (text: string) => string = (text) => text) =>
  [header, ...rows].map((row) => header.map((_, column) => cell(row[column] ?? '')));

const widthsOf = (cells: string[][], least: number) =>
  (cells[0] ?? []).map((_, column) => Math.max(least, ...cells.map((row) => (row[column] ?? '').length)));

const padded = (cell: string, width: number, align: Align | undefined) =>
  align === 'right' ? cell.padStart(width) : cell.padEnd(width);

/** A Markdown table, one string per line: the header, the rule under it, then each row; `|` in a cell escaped. */
export function markdownTableLines(
  header: readonly string[],
  rows: Cells,
  options: TableOptions = {},
): string[] {
  const [head = [], ...body] = fitted(header, rows, (text) => text.replaceAll('|', '\\|'));
  const widths = widthsOf([head, ...body], 3);
  const { align } = options;
  const line = (cells: string[]) =>
    `| ${widths.map((width, column) => padded(cells[column] ?? '', width, align?.[column])).join(' | ')} |`;
  const rule = widths.map((width, column) => {
    if (!align) return '-'.repeat(width);
    return align[column] === 'right' ? `${'-'.repeat(width - 1)}:` : `:${'-'.repeat(width - 1)}`;
  });
  return [line(head), `| ${rule.join(' | ')} |`, ...body.map(line)];
}

/** The same table as one Markdown string. */
export function markdownTable(header: readonly string[], rows: Cells, options: TableOptions = {}): string {
  return markdownTableLines(header, rows, options).join('\n');
}

/**
 * A Markdown table declared by column, one string per line: each header beside how a row fills its
 * cell, so a column cannot drift from its header. The headers are the keys, in the order written.
 */
export function markdownTableLinesOf<Row>(
  rows: readonly Row[],
  columns: Record<string, (row: Row) => unknown>,
  options: TableOptions = {},
): string[] {
  const cells = Object.values(columns);
  return markdownTableLines(
    Object.keys(columns),
    rows.map((row) => cells.map((cell) => String(cell(row)))),
    options,
  );
}

/** The same table as one Markdown string. */
export function markdownTableOf<Row>(
  rows: readonly Row[],
  columns: Record<string, (row: Row) => unknown>,
  options: TableOptions = {},
): string {
  return markdownTableLinesOf(rows, columns, options).join('\n');
}

/** As plain text for a terminal: aligned columns two spaces apart, a rule of `─` under the header. */
export function textTable(header: readonly string[], rows: Cells, options: TableOptions = {}): string[] {
  const [head = [], ...body] = fitted(header, rows);
  const widths = widthsOf([head, ...body], 0);
  const line = (cells: string[]) =>
    widths
      .map((width, column) => padded(cells[column] ?? '', width, options.align?.[column]))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((width) => '─'.repeat(width)).join('  '), ...body.map(line)];
}
