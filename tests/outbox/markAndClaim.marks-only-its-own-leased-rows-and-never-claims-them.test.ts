// The mark a relay sends with its next claim (packages/outbox/src/claimSql.ts, markAndClaim) is
// fenced like the mark alone: it marks only the rows the relay still leases, never a row another
// relay took over (which may not be on the broker from this relay's send); the claim in the same
// statement never takes the rows it marks, extends the runs of the rows it did mark, and extends
// nothing behind a row it could not mark.

import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { insertEvents, outboxRows, useOutboxPool } from '@outbox/devstack/testing/outbox-database';
import { type ClaimedRow, claimBatch, markAndClaim } from '@outbox/outbox';
import { describe, expect, it } from 'vitest';

useLeakGuard();

const outbox = useOutboxPool('events_mark_and_claim', 4);

const LEASE_MS = 30_000;
const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
const statusById = async () => new Map((await outboxRows(outbox.db.url)).map((row) => [row.id, row]));

describe('markAndClaim', () => {
  it('marks its batch and claims the next events of its aggregates, never the rows it marks', async () => {
    await insertEvents(outbox.db.url, { count: 6, aggregates: 2, aggregateIdPrefix: 'next-' });
    const first = await claimBatch(outbox.pool, 'relay-a', LEASE_MS, 2);
    const { marked, rows } = await markAndClaim(outbox.pool, 'relay-a', LEASE_MS, 10, ids(first));
    expect(marked).toEqual(new Set(ids(first)));
    expect(rows).toHaveLength(4);
    expect(ids(rows).some((id) => marked.has(id))).toBe(false);
    const after = await statusById();
    for (const id of ids(first)) expect(after.get(id)?.status).toBe('published');
    for (const id of ids(rows))
      expect(after.get(id)).toMatchObject({ status: 'in_flight', lease_owner: 'relay-a' });
  });

  it('marks none of the rows another relay took over, and extends none of their aggregates', async () => {
    await insertEvents(outbox.db.url, { count: 4, aggregates: 2, aggregateIdPrefix: 'taken-' });
    const first: ClaimedRow[] = await claimBatch(outbox.pool, 'relay-a', LEASE_MS, 2);
    const [takenOver, kept] = first;
    // relay-a's lease on one of them ran out and relay-b claimed it: relay-b may still be sending it.
    await outbox.pool.query(
      `update outbox set lease_expires_at = now() - interval '1 second' where id = $1`,
      [takenOver?.id],
    );
    const byB = await claimBatch(outbox.pool, 'relay-b', LEASE_MS, 1);
    expect(ids(byB)).toEqual([takenOver?.id]);

    const { marked, rows } = await markAndClaim(outbox.pool, 'relay-a', LEASE_MS, 10, ids(first));
    expect(marked).toEqual(new Set([kept?.id]));
    const after = await statusById();
    expect(after.get(takenOver?.id ?? '')).toMatchObject({ status: 'in_flight', lease_owner: 'relay-b' });
    // Only the kept row's aggregate goes on; the taken-over one's next event waits behind relay-b's.
    expect(new Set(rows.map((row) => row.aggregate_id))).toEqual(new Set([kept?.aggregate_id]));
  });

  it('marks nothing that is not in flight under its lease: a row given back stays pending', async () => {
    await insertEvents(outbox.db.url, { count: 1, aggregates: 1, aggregateIdPrefix: 'back-' });
    const first = await claimBatch(outbox.pool, 'relay-a', LEASE_MS, 1);
    await outbox.pool.query(
      `update outbox set status = 'pending', lease_owner = null, lease_expires_at = null`,
    );
    const { marked } = await markAndClaim(outbox.pool, 'relay-a', LEASE_MS, 0, ids(first));
    expect(marked.size).toBe(0);
    expect((await outboxRows(outbox.db.url))[0]?.status).toBe('pending');
  });
});
