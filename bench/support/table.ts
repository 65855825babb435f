/**
 * A bench's Markdown table declared by column: each header beside how a row fills its cell, so a
 * column cannot drift from its header (the lab's one table writer lays it out).
 */
import { markdownTableLines } from '@outbox/devstack/table';

export function tableOf<Row>(rows: readonly Row[], columns: Record<string, (row: Row) => unknown>): string[] {
  const cells = Object.values(columns);
  return markdownTableLines(
    Object.keys(columns),
    rows.map((row) => cells.map((cell) => String(cell(row)))),
  );
}
