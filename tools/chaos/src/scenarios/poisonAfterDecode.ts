import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Scenario, ScenarioContext } from '../scenario.ts';

/** A valid ORDER_CREATED payload, to be spoiled in ways a lax contract would let through. */
const order = (overrides: Record<string, unknown> = {}) => ({
  orderId: randomUUID(),
  customerId: 'poison-after-decode',
  currency: 'EUR',
  totalCents: '900',
  items: [{ sku: 'CB-505', quantity: 1, unitPriceCents: '900' }],
  ...overrides,
});

/**
 * Messages that are valid JSON CloudEvents of a known type and version, but that no database
 * could store: before the contracts matched the columns, each one failed in its handler the
 * same way on every delivery and blocked its partition for ever. (An event id that is not a UUID
 * cannot come through an outbox, whose ids are uuids: tests/consumers covers it with a raw producer.)
 */
export const poisonAfterDecode: Scenario = {
  name: 'poison-after-decode',
  breaks:
    'ORDER_CREATED rows written straight into the orders outbox under load that decode but cannot be applied: ' +
    'the same SKU on two lines, a total beyond bigint, a quantity beyond integer',
  expectation:
    'inventory and billing dead-letter each of them to order.events.dlt with the reason and apply every other ' +
    'event of their partitions; no consumer crash-loops, no healthy order waits behind them.',
  inject: async (context) => {
    await context.sleep(4_000);
    const ids = await insertPoison(context, 1_000);
    context.fault(
      `${ids.length} decodable but unappliable ORDER_CREATED rows committed to the orders outbox`,
    );
    context.expectDeadLetters({ consumerDeadLetters: ids });
  },
};

/**
 * Commit the three poison ORDER_CREATED rows to the orders outbox, `spacingMs` apart, each keyed by
 * its own order id like a real ORDER_CREATED, so it lands among the load's orders. Returns their ids.
 */
export async function insertPoison(context: ScenarioContext, spacingMs: number): Promise<string[]> {
  const poison = [
    order({
      totalCents: '1800',
      items: [
        { sku: 'CB-505', quantity: 1, unitPriceCents: '900' },
        { sku: 'CB-505', quantity: 1, unitPriceCents: '900' },
      ],
    }),
    order({ totalCents: '99999999999999999999' }),
    order({ items: [{ sku: 'CB-505', quantity: 3_000_000_000, unitPriceCents: '900' }] }),
  ];
  const ids = poison.map(() => randomUUID());
  const client = new pg.Client({ connectionString: context.stack.databases.orders.url });
  await client.connect();
  try {
    for (const [n, data] of poison.entries()) {
      await client.query(
        `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
         values ($1::uuid, '/chaos', 'order', $2, 'ORDER_CREATED', 1, $3::jsonb)`,
        [ids[n], data.orderId, JSON.stringify(data)],
      );
      await context.sleep(spacingMs);
    }
  } finally {
    await client.end();
  }
  return ids;
}
