import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { cdcSql } from '../src/cdcStore.ts';
import {
  createOutboxStore,
  type OutboxStore,
  outboxSql,
  preparedStatementNames,
} from '../src/outboxStore.ts';

// The OutboxStore interface (outboxStore.ts) names every operation on outbox rows; these tests hold
// its implementation to the statements each operation's function runs, and its state diagram to
// the operations that exist. The statements themselves run against PostgreSQL in tests/outbox.

type Sent = { name?: string; text: string; values: unknown[] };

/** A pool that records what it is sent and answers with no rows. */
function recordingDb(): { db: pg.Pool; sent: Sent[] } {
  const sent: Sent[] = [];
  const query = async (
    config: string | { name?: string; text: string; values?: unknown[] },
    values?: unknown[],
  ) => {
    sent.push(
      typeof config === 'string'
        ? { text: config, values: values ?? [] }
        : { ...config, values: config.values ?? [] },
    );
    return { rows: [], rowCount: 0 };
  };
  return { db: { query } as unknown as pg.Pool, sent };
}

const mark = { lsn: '0/1', reader: '1@2', ids: ['a'], lastSeq: '1' };
const calls: { [K in keyof OutboxStore]: (store: OutboxStore) => Promise<unknown> } = {
  claimBatch: (store) => store.claimBatch('relay-1', 30_000, 10),
  markPublished: (store) => store.markPublished(['a'], 'relay-1'),
  markAndClaim: (store) => store.markAndClaim('relay-1', 30_000, 10, ['a']),
  renewLeases: (store) => store.renewLeases(['a'], 'relay-1', 30_000),
  scheduleRetry: (store) =>
    store.scheduleRetry(['a'], 'relay-1', { error: 'x', delayMs: 100, countAttempt: true }),
  markFailed: (store) => store.markFailed('a', 'relay-1', 'x'),
  redrive: (store) => store.redrive({ all: true }),
  deletePublished: (store) => store.deletePublished(3_600_000, 1000),
  outboxStats: (store) => store.outboxStats(),
  readSlotReader: (store) => store.readSlotReader('slot', undefined),
  takeConfirmationMark: (store) => store.takeConfirmationMark('slot', 100, { after: '0' }),
  markConfirmed: (store) => store.markConfirmed(mark, 'slot'),
  countUndrained: (store) => store.countUndrained('10'),
};

/** The statements each operation sends, in order, as named in outboxSql and cdcSql. */
const expected: { [K in keyof OutboxStore]: string[] } = {
  claimBatch: [outboxSql.claim],
  markPublished: [outboxSql.markPublished],
  markAndClaim: [outboxSql.markAndClaim],
  renewLeases: [outboxSql.renewLeases],
  scheduleRetry: [outboxSql.scheduleRetry],
  markFailed: [outboxSql.markFailed],
  redrive: [outboxSql.redrive],
  deletePublished: [outboxSql.deletePublished],
  outboxStats: [outboxSql.stats],
  readSlotReader: [cdcSql.walInsertPosition, cdcSql.slotReader, cdcSql.maxSeq],
  takeConfirmationMark: [cdcSql.confirmationMark],
  markConfirmed: [cdcSql.markConfirmed],
  countUndrained: [cdcSql.undrained],
};

describe('the outbox store', () => {
  it.each(Object.keys(calls) as (keyof OutboxStore)[])('runs %s as its statements', async (operation) => {
    const { db, sent } = recordingDb();
    await calls[operation](createOutboxStore(db));
    const statements = expected[operation];
    expect(sent).toHaveLength(statements.length);
    statements.forEach((statement, k) => {
      // markConfirmed wraps its update to learn whether the slot confirmed the mark.
      expect(sent[k]?.text).toContain(statement);
    });
  });

  it('sends the hot statements as the named prepared statements', async () => {
    const { db, sent } = recordingDb();
    const store = createOutboxStore(db);
    await store.claimBatch('relay-1', 30_000, 10);
    await store.markPublished(['a'], 'relay-1');
    await store.markAndClaim('relay-1', 30_000, 10, ['a']);
    await store.renewLeases(['a'], 'relay-1', 30_000);
    expect(sent.map((query) => query.name)).toEqual(Object.values(preparedStatementNames));
  });

  it('draws a state diagram whose every transition is an operation of the store or writeEvent', () => {
    const source = readFileSync(new URL('../src/outboxStore.ts', import.meta.url), 'utf8');
    const transitions = [...source.matchAll(/^ \* {3}(\S+) --> (\S+): (.*)$/gm)];
    const operations = new Set([...Object.keys(calls), 'writeEvent']);
    // Each label starts with the operation that makes the transition.
    const first = transitions.map(([, , , label = '']) => label.split(/[ ,]/)[0] ?? '');
    expect(transitions.length).toBeGreaterThanOrEqual(8);
    expect(first.filter((name) => !operations.has(name))).toEqual([]);
    const named = transitions.flatMap(([, , , label = '']) => label.split(/\W+/));
    // Every operation that changes a row's status is drawn.
    const changing = Object.keys(calls).filter(
      (name) => !['outboxStats', 'readSlotReader', 'takeConfirmationMark', 'countUndrained'].includes(name),
    );
    expect(changing.filter((name) => !named.includes(name))).toEqual([]);
    const states = new Set(transitions.flatMap(([, from, to]) => [from, to]));
    expect([...states].sort()).toEqual(['[*]', 'failed', 'in_flight', 'pending', 'published']);
  });
});
