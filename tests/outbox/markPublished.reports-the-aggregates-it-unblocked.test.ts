// The relay claims again right after a mark only when the mark unblocked something: an aggregate
// whose next event was waiting behind the one just published (apps/relay/src/engine/relay.ts #loop).
// So markPublished must count exactly those, through one fenced statement.

import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase, insertEvents } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { claimBatch, markPublished } from '@outbox/outbox';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

useLeakGuard();

let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createOutboxDatabase('events_mark_unblocked');
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});
beforeEach(async () => {
  await pool.query('truncate outbox');
});

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

describe('markPublished', () => {
  it('counts the marked events whose aggregate has a later event waiting', async () => {
    // Three aggregates: two with a second event behind the head, one with a single event.
    await insertEvents(db.url, { count: 5, aggregates: 3, aggregateIdPrefix: 'm-' });
    // A claim of three: the three heads (a larger one would take the later events along).
    const heads = await claimBatch(pool, 'relay-a', 30_000, 3);
    expect(heads.map((row) => row.aggregate_id).sort()).toEqual(['m-0', 'm-1', 'm-2']);

    const marked = await markPublished(pool, ids(heads), 'relay-a');
    expect(marked.ids).toEqual(new Set(ids(heads)));
    expect(marked.unblocked).toBe(2);

    // The two later events are the heads now; publishing them unblocks nothing.
    const next = await claimBatch(pool, 'relay-a', 30_000, 10);
    expect(next.map((row) => row.aggregate_id).sort()).toEqual(['m-0', 'm-1']);
    expect((await markPublished(pool, ids(next), 'relay-a')).unblocked).toBe(0);
  });

  it('reports nothing for rows whose lease another relay holds', async () => {
    await insertEvents(db.url, { count: 2, aggregates: 1, aggregateIdPrefix: 'fenced-' });
    const [head] = await claimBatch(pool, 'relay-a', 30_000, 10);
    if (!head) throw new Error('nothing claimed');
    // Another relay took the lease over (as after an expiry).
    await pool.query(`update outbox set lease_owner = 'relay-b' where id = $1`, [head.id]);

    const marked = await markPublished(pool, [head.id], 'relay-a');
    expect(marked.ids.size).toBe(0);
    expect(marked.unblocked).toBe(0);
  });

  it('counts any later unpublished event, even one a dead letter holds back: a claim too many, never one too few', async () => {
    await insertEvents(db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'x-' });
    const [head] = await claimBatch(pool, 'relay-a', 30_000, 10);
    if (!head) throw new Error('nothing claimed');
    await insertEvents(db.url, { count: 2, aggregates: 1, aggregateIdPrefix: 'x-' });
    await pool.query(
      `update outbox set status = 'failed' where seq = (select min(seq) from outbox where status = 'pending')`,
    );
    expect((await markPublished(pool, [head.id], 'relay-a')).unblocked).toBe(1);
  });
});
