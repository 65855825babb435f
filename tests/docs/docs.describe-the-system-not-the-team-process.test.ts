import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docFiles, repoRoot } from './docReferences.ts';

// The docs teach the system. A reader has no use for the tracker's numbers, the order in which
// the work was done, or who ran which test: each of these phrases says something about the team,
// and the sentence around it should say what the system does instead.
const PROCESS_WORDING: { name: string; pattern: RegExp }[] = [
  { name: 'an issue number', pattern: /\bissues?\s*#?\d+|#\d+\s+item\b|\(#\d+\)/i },
  { name: 'the issue as a source', pattern: /\b(our|the|this|that) issue\b|\bissue's\b/i },
  { name: 'the mission', pattern: /\bmission\b/i },
  {
    name: 'a round of work',
    pattern: /\bround (one|two|three|four|five|six|seven|eight|nine|ten)\b|\b(this|that|last|next) round\b/i,
  },
  { name: 'a session of work', pattern: /\b(same|this|that|our|another|earlier|previous|next) session\b/i },
  { name: 'a helper', pattern: /\bhelpers?\b/i },
  { name: 'who ran it', pattern: /\bengineers?'?s?\b|\b(we|I) (were|was) asked\b|\bthe lead\b/i },
];

type Finding = { where: string; kind: string; text: string };

/** Every line of a markdown file (code blocks included: a command's comment is read too) that speaks of the process. */
export function processWording(file: string, text = readFileSync(file, 'utf8')): Finding[] {
  return text.split('\n').flatMap((line, index) =>
    PROCESS_WORDING.filter(({ pattern }) => pattern.test(line)).map(({ name }) => ({
      where: `${relative(repoRoot, file)}:${index + 1}`,
      kind: name,
      text: line.trim().slice(0, 120),
    })),
  );
}

describe('the docs describe the system, not the work that built it', () => {
  it('README.md and docs/**/*.md carry no issue numbers, rounds, sessions, helpers or who ran what', () => {
    expect(docFiles().flatMap((file) => processWording(file))).toEqual([]);
  });

  it('tells process wording from the same words about the system', () => {
    const kinds = (text: string) => processWording('doc.md', text).map((finding) => finding.kind);
    expect(kinds('measured for issue #25')).toEqual(['an issue number']);
    expect(kinds('kafkajs stays (issue 15, item 6)')).toEqual(['an issue number']);
    expect(kinds('Our issue asks for two things')).toEqual(['the issue as a source']);
    expect(kinds('## Round two (24 November 2026): round trips')).toEqual(['a round of work']);
    expect(kinds('E1 ÷ E0 in the same session')).toEqual(['a session of work']);
    expect(kinds("two helpers' test runs alongside")).toEqual(['a helper']);
    expect(kinds("other engineers' test suites running")).toEqual(['who ran it']);
    expect(kinds('as the mission asks')).toEqual(['the mission']);
    // The same words where they name the system's own things.
    expect(kinds('one extra round trip, median over 15 rounds, every round rotates')).toEqual([]);
    expect(kinds("after the dead member's session times out (broker.session.timeout.ms)")).toEqual([]);
    expect(kinds('a session setting on the relay; the card issuer declines')).toEqual([]);
  });
});
