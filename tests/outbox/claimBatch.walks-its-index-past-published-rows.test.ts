// On the relay's session settings (OUTBOX_SESSION_OPTIONS), the claim walks outbox_claimable_idx
// in seq order with a plain index scan and stops at its limit; never a bitmap scan, which the
// planner prefers when it expects few due rows. A plain index scan marks the entries of rows
// published since as dead while it passes them, so later claims skip them; a bitmap scan never
// does, and until a vacuum every claim reads the table pages of every row published since. Measured
// on the whole system (bench:where-time-goes after 10,000 orders, docs/performance.md): the orders
// outbox's claim read 833 buffers in 7.8 ms with a bitmap scan, 17 buffers in 0.19 ms without.

import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { createOutboxDatabase } from '@outbox/devstack/testing/outbox-database';
import type { TestDatabase } from '@outbox/devstack/testing/test-database';
import { claimBatch, markPublished, OUTBOX_SESSION_OPTIONS, outboxSql } from '@outbox/outbox';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

useLeakGuard();

const ROUNDS = 30;
const PER_ROUND = 100;

type PlanNode = { 'Node Type': string; 'Index Name'?: string; Plans?: PlanNode[] };

function nodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)];
}

let db: TestDatabase;
let relay: pg.Client;

beforeAll(async () => {
  db = await createOutboxDatabase('outbox_claim_walk');
  // The relay's connection, with the relay's session settings.
  relay = new pg.Client({ connectionString: db.url, options: OUTBOX_SESSION_OPTIONS });
  await relay.connect();
  // An outbox the relay has worked on: 3,000 events written, claimed and marked published.
  for (let round = 0; round < ROUNDS; round++) {
    await relay.query(
      `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
       select gen_random_uuid(), '/orders', 'order', 'order-' || $1::int || '-' || n, 'ORDER_CREATED', 1, '{}'
         from generate_series(1, $2::int) as n`,
      [round, PER_ROUND],
    );
    const claimed = await claimBatch(relay, 'relay-1', 30_000, PER_ROUND);
    const marked = await markPublished(
      relay,
      claimed.map((row) => row.id),
      'relay-1',
    );
    expect(marked.ids.size).toBe(PER_ROUND);
  }
  // One event due now, as at a low rate.
  await relay.query(
    `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
     values (gen_random_uuid(), '/orders', 'order', 'due-now', 'ORDER_CREATED', 1, '{}')`,
  );
}, 60_000);

afterAll(async () => {
  await relay?.end();
  await db?.drop();
});

describe('the claim on the relay’s connection, over an outbox of 3,000 published rows', () => {
  it('walks outbox_claimable_idx with a plain index scan, never a bitmap scan', async () => {
    const { rows } = await relay.query(`explain (format json) ${outboxSql.claim}`, [
      'probe',
      30_000,
      PER_ROUND,
      [],
    ]);
    const plan = (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]?.Plan as PlanNode;
    const types = nodes(plan).map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`);
    expect(types, types.join(' > ')).toContain('Index Scan outbox_claimable_idx');
    expect(
      types.filter((t) => t.startsWith('Bitmap')),
      types.join(' > '),
    ).toEqual([]);
  });

  it('claims the event that is due', async () => {
    await relay.query('begin');
    try {
      const claimed = await claimBatch(relay, 'relay-2', 30_000, PER_ROUND);
      expect(claimed.map((row) => row.aggregate_id)).toEqual(['due-now']);
    } finally {
      await relay.query('rollback');
    }
  });
});
