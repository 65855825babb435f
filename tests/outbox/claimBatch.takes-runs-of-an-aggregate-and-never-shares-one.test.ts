// The claim takes many events of one aggregate per batch (a run from its head, in seq order) and
// keeps the ordering guarantees the relay depends on: another relay never gets a later event of
// an aggregate while one relay holds an earlier one, a retry or a dead letter holds back the rest
// of its aggregate, and only the batch a relay has in hand lets its next claim extend a run
// (packages/outbox/src/claimSql.ts).

import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { insertEvents, outboxRows, useOutboxPool } from '@outbox/devstack/testing/outbox-database';
import { type ClaimedRow, claimBatch, markPublished } from '@outbox/outbox';
import { describe, expect, it } from 'vitest';

useLeakGuard();

const outbox = useOutboxPool('events_claim_runs', 6);

const LEASE_MS = 30_000;
const seqs = (rows: ClaimedRow[]) => rows.map((row) => Number(row.seq));
const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

describe('claimBatch', () => {
  it('takes a run of one aggregate’s events, in seq order, up to its limit', async () => {
    await insertEvents(outbox.db.url, { count: 300, aggregates: 1, aggregateIdPrefix: 'busy-' });
    const claimed = await claimBatch(outbox.pool, 'relay-a', LEASE_MS, 100);
    const all = await outboxRows(outbox.db.url);
    expect(seqs(claimed)).toEqual(all.slice(0, 100).map((row) => row.seq));
  });

  it('gives another relay none of an aggregate one relay holds part of, and the rest once it is published', async () => {
    await insertEvents(outbox.db.url, { count: 30, aggregates: 2, aggregateIdPrefix: 'two-' });
    const first = await claimBatch(outbox.pool, 'relay-a', LEASE_MS, 10);
    // Seq order, round-robin: the first ten are five of each aggregate.
    expect(new Set(first.map((row) => row.aggregate_id))).toEqual(new Set(['two-0', 'two-1']));

    expect(await claimBatch(outbox.pool, 'relay-b', LEASE_MS, 100)).toEqual([]);
    // relay-a itself, claiming without that batch in hand (as after its outcome was lost), neither.
    expect(await claimBatch(outbox.pool, 'relay-a', LEASE_MS, 100)).toEqual([]);

    await markPublished(outbox.pool, ids(first), 'relay-a');
    const rest = await claimBatch(outbox.pool, 'relay-b', LEASE_MS, 100);
    expect(rest).toHaveLength(20);
  });

  it('extends the runs of the batch the relay has in hand, and no other relay’s', async () => {
    await insertEvents(outbox.db.url, { count: 30, aggregates: 2, aggregateIdPrefix: 'hand-' });
    const first = await claimBatch(outbox.pool, 'relay-a', LEASE_MS, 10);
    // Another relay naming relay-a's batch gains nothing: the rows are not in flight with it.
    expect(await claimBatch(outbox.pool, 'relay-b', LEASE_MS, 100, ids(first))).toEqual([]);

    const next = await claimBatch(outbox.pool, 'relay-a', LEASE_MS, 10, ids(first));
    expect(Math.min(...seqs(next))).toBeGreaterThan(Math.max(...seqs(first)));
    expect(next).toHaveLength(10);
  });

  it('holds back the later events of an aggregate behind a retry or a dead letter, and nothing else', async () => {
    await insertEvents(outbox.db.url, { count: 9, aggregates: 3, aggregateIdPrefix: 'held-' });
    const [retry, deadLetter] = (await outboxRows(outbox.db.url)).slice(0, 2);
    await outbox.pool.query(`update outbox set next_attempt_at = now() + interval '1 hour' where id = $1`, [
      retry?.id,
    ]);
    await outbox.pool.query(`update outbox set status = 'failed' where id = $1`, [deadLetter?.id]);

    const claimed = await claimBatch(outbox.pool, 'relay-a', LEASE_MS, 100);
    expect(new Set(claimed.map((row) => row.aggregate_id))).toEqual(new Set(['held-2']));
    expect(claimed).toHaveLength(3);
  });

  it('takes a dead relay’s expired run over from its head, in order', async () => {
    await insertEvents(outbox.db.url, { count: 12, aggregates: 1, aggregateIdPrefix: 'expired-' });
    const dead = await claimBatch(outbox.pool, 'relay-dead', LEASE_MS, 5);
    await outbox.pool.query(
      `update outbox set lease_expires_at = now() - interval '1 second' where id = any($1)`,
      [ids(dead)],
    );
    const taken = await claimBatch(outbox.pool, 'relay-b', LEASE_MS, 100);
    expect(seqs(taken)).toEqual((await outboxRows(outbox.db.url)).map((row) => row.seq));
    expect(taken.slice(0, 5).every((row) => row.lease_expired)).toBe(true);
  });

  it('never lets concurrent claims of four relays share an aggregate or skip ahead of its head', {
    timeout: 180_000,
  }, async () => {
    const AGGREGATES = 12;
    await insertEvents(outbox.db.url, { count: 1200, aggregates: AGGREGATES, aggregateIdPrefix: 'race-' });
    const relays = ['r1', 'r2', 'r3', 'r4'];
    const inHand = new Map<string, ClaimedRow[]>(relays.map((relay) => [relay, []]));
    for (let round = 0; round < 200; round++) {
      // Each relay claims (with its previous batch in hand) at the same time as the others.
      const claims = await Promise.all(
        relays.map((relay, i) =>
          claimBatch(outbox.pool, relay, LEASE_MS, 5 + ((round + i * 7) % 40), ids(inHand.get(relay) ?? [])),
        ),
      );
      const rows = await outboxRows(outbox.db.url);
      if (rows.every((row) => row.status === 'published')) break;
      for (let a = 0; a < AGGREGATES; a++) {
        const unpublished = rows.filter(
          (row) => row.aggregate_id === `race-${a}` && row.status !== 'published',
        );
        const inFlight = unpublished.filter((row) => row.status === 'in_flight');
        // One owner per aggregate, and its rows are the aggregate's first unpublished ones.
        expect(new Set(inFlight.map((row) => row.lease_owner)).size).toBeLessThanOrEqual(1);
        expect(ids(inFlight)).toEqual(ids(unpublished.slice(0, inFlight.length)));
      }
      // The previous batch in hand is acknowledged and marked now; this round's stays in hand.
      await Promise.all(
        relays.map(async (relay, i) => {
          const previous = inHand.get(relay) ?? [];
          if (previous.length > 0) await markPublished(outbox.pool, ids(previous), relay);
          inHand.set(relay, claims[i] ?? []);
        }),
      );
    }
    for (const relay of relays) await markPublished(outbox.pool, ids(inHand.get(relay) ?? []), relay);
    expect((await outboxRows(outbox.db.url)).filter((row) => row.status !== 'published')).toEqual([]);
  });
});
