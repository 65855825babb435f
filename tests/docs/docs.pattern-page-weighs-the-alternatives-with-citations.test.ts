import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './docReferences.ts';

// The one-page statement of the pattern is where a reader decides whether to use it at all: it
// must weigh each way of getting the same guarantee and send the reader to the sources.
const page = readFileSync(join(repoRoot, 'docs', 'pattern.md'), 'utf8');
const section = (heading: string) => page.split(/^## /m).find((part) => part.startsWith(heading)) ?? '';

describe('docs/pattern.md states the pattern and weighs the alternatives', () => {
  it('has the problem, the guarantee, the cost and the alternatives', () => {
    for (const heading of [
      'The problem',
      'The pattern',
      'The guarantee',
      'What it costs',
      'The alternatives',
    ]) {
      expect(section(heading), heading).not.toBe('');
    }
  });

  it('says when each alternative wins', () => {
    const alternatives = section('The alternatives');
    for (const way of [
      'event sourcing',
      'listen to yourself',
      'two-phase commit',
      'pg_logical_emit_message',
      'CDC on the business tables',
      'durable execution',
    ]) {
      expect(alternatives.toLowerCase(), way).toContain(way.toLowerCase());
    }
  });

  it('cites microservices.io, Debezium, Kleppmann and the articles it builds on', () => {
    const reading = section('Further reading');
    for (const source of [
      'microservices.io/patterns/data/transactional-outbox',
      'debezium.io/documentation/reference/stable/transformations/outbox-event-router',
      'Designing Data-Intensive Applications',
      'Transactional Outbox Pattern in Go with PostgreSQL',
    ]) {
      expect(reading, source).toContain(source);
    }
  });
});
