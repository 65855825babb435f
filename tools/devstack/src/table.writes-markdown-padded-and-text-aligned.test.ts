import { describe, expect, it } from 'vitest';
import { markdownTable, markdownTableLines, markdownTableOf, textTable } from './table.ts';

describe('the lab table writer', () => {
  it('pads each Markdown column to its widest cell, at least three wide, as the formatter keeps it', () => {
    expect(markdownTableLines(['a', 'events/s'], [['relay', '6,734'], ['x']])).toEqual([
      '| a     | events/s |',
      '| ----- | -------- |',
      '| relay | 6,734    |',
      '| x     |          |',
    ]);
  });

  it('aligns and marks right-aligned columns, and escapes a pipe in a cell', () => {
    expect(markdownTable(['state', 'n'], [['a|b', '12']], { align: ['left', 'right'] })).toBe(
      ['| state |   n |', '| :---- | --: |', '| a\\|b  |  12 |'].join('\n'),
    );
  });

  it('writes the same table as plain text: two spaces apart, a rule under the header, no trailing blanks', () => {
    expect(
      textTable(
        ['kind', 'sent'],
        [
          ['plain', '3'],
          ['x', '120'],
        ],
        { align: ['left', 'right'] },
      ),
    ).toEqual(['kind   sent', '─────  ────', 'plain     3', 'x       120']);
  });

  it('writes a table declared by column as the same table written by header and rows', () => {
    const runs = [
      { name: 'relay', rate: 6734 },
      { name: 'x', rate: 12 },
    ];
    expect(markdownTableOf(runs, { a: (run) => run.name, 'events/s': (run) => String(run.rate) })).toBe(
      markdownTable(
        ['a', 'events/s'],
        [
          ['relay', '6734'],
          ['x', '12'],
        ],
      ),
    );
  });
});
