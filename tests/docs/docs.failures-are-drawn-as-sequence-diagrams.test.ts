import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './docReferences.ts';

// GitHub renders a ```mermaid block as a diagram, and shows it as an error box when Mermaid cannot
// parse it. Mermaid reads a `;` inside a sequence diagram as the end of a statement, so a message
// such as "BEGIN; insert; COMMIT" cuts the diagram in two: the cheapest parse error to make.

/** The body of every ```mermaid block of a markdown text. */
export function mermaidBlocks(text: string): string[] {
  return [...text.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
}

const failures = readFileSync(join(repoRoot, 'docs', 'failures.md'), 'utf8');

describe('each failure the outbox is there for is drawn as a sequence', () => {
  it('docs/failures.md holds at least five sequence diagrams', () => {
    const sequences = mermaidBlocks(failures).filter((block) =>
      block.trimStart().startsWith('sequenceDiagram'),
    );
    expect(sequences.length).toBeGreaterThanOrEqual(5);
  });

  it('names the six failures: lost, invented, relay duplicate, consumer duplicate, ghost, standby wait', () => {
    const headings = failures.split('\n').filter((line) => line.startsWith('## '));
    for (const word of ['lost', 'invented', 'duplicate', 'deduplicated', 'ghost', 'standby wait']) {
      expect(headings.join('\n'), word).toContain(word);
    }
  });

  it('no diagram holds a semicolon, which Mermaid reads as the end of a statement', () => {
    const withSemicolon = mermaidBlocks(failures).filter((block) => block.includes(';'));
    expect(withSemicolon).toEqual([]);
    expect(mermaidBlocks('```mermaid\nsequenceDiagram\n  A->>B: x; y\n```\n')[0]).toContain(';');
  });
});
