import { type Align, markdownTable, textTable } from '@outbox/devstack/table';

/** A titled table of strings; columns after the first are numbers and align right. */
export type Table = { title: string; header: string[]; rows: string[][] };

const numbersRight = (table: Table): Align[] =>
  table.header.map((_, column) => (column === 0 ? 'left' : 'right'));

/** As plain text for a terminal: a title line, then aligned columns. */
export function tableAsText(table: Table): string {
  return [table.title, ...textTable(table.header, table.rows, { align: numbersRight(table) })].join('\n');
}

/** As GitHub-flavoured markdown: a bold title and a table with right-aligned number columns. */
export function tableAsMarkdown(table: Table): string {
  const body = markdownTable(table.header, table.rows, { align: numbersRight(table) });
  return [`**${table.title}**`, '', body].join('\n');
}
