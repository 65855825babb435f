/** A titled table of strings; columns after the first are numbers and align right. */
export type Table = { title: string; header: string[]; rows: string[][] };

/** As plain text for a terminal: a title line, then aligned columns. */
export function tableAsText(table: Table): string {
  const widths = table.header.map((cell, column) =>
    Math.max(cell.length, ...table.rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (row: string[]) =>
    row
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '─'.repeat(width)).join('  ');
  return [table.title, line(table.header), rule, ...table.rows.map(line)].join('\n');
}

/** As GitHub-flavoured markdown: a bold title and a table with right-aligned number columns. */
export function tableAsMarkdown(table: Table): string {
  const escapePipes = (cell: string) => cell.replaceAll('|', '\\|');
  const row = (cells: string[]) => `| ${cells.map(escapePipes).join(' | ')} |`;
  const align = table.header.map((_, column) => (column === 0 ? ':--' : '--:'));
  return [`**${table.title}**`, '', row(table.header), row(align), ...table.rows.map(row)].join('\n');
}
