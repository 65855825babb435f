// Poison: rows written straight into the orders outbox under load that the broker refuses, that
// no consumer can read, or that decode but cannot be applied; each must be dead-lettered without
// holding up the events around it.
import { randomUUID } from 'node:crypto';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import type { Scenario, ScenarioContext } from '../scenario.ts';

/** A valid ORDER_CREATED payload, to be spoiled in different ways. */
const order = (overrides: Record<string, unknown> = {}) => ({
  orderId: randomUUID(),
  customerId: 'poison',
  currency: 'EUR',
  totalCents: '900',
  items: [{ sku: 'CB-505', quantity: 1, unitPriceCents: '900' }],
  ...overrides,
});

type PoisonRow = { aggregateId: string; type: string; payload: object };

/** Commit each row to the orders outbox, waiting `spacingMs` after each. Returns their ids. */
async function commitPoison(context: ScenarioContext, rows: PoisonRow[], spacingMs = 0): Promise<string[]> {
  const ids: string[] = [];
  for (const { aggregateId, type, payload } of rows) {
    const id = randomUUID();
    await queryOnce(
      context.stack.databases.orders.url,
      `insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
       values ($1::uuid, '/chaos', 'order', $2, $3, 1, $4::jsonb)`,
      [id, aggregateId, type, JSON.stringify(payload)],
    );
    ids.push(id);
    await context.sleep(spacingMs);
  }
  return ids;
}

export const poisonEvents: Scenario = {
  name: 'poison-events',
  breaks:
    'poison rows written straight into the orders outbox under load: a 2 MB event (the broker refuses it), ' +
    'an ORDER_CREATED that breaks its contract, an event type nobody knows',
  expectation:
    'The relay dead-letters the oversized row at once (status failed) and publishes the others; inventory and ' +
    'billing send the unreadable ones to order.events.dlt and move on. No healthy event waits behind them.',
  inject: async (context) => {
    await context.sleep(4_000);
    const [tooLarge = '', breaksContract = '', unknownType = ''] = await commitPoison(
      context,
      [
        { type: 'ORDER_CREATED', payload: order({ note: 'x'.repeat(2 * 1024 * 1024) }) },
        { type: 'ORDER_CREATED', payload: order({ orderId: 'not-a-uuid', totalCents: -1 }) },
        { type: 'ORDER_TELEPORTED', payload: order() },
      ].map((row) => ({ ...row, aggregateId: randomUUID() })),
    );
    context.fault('3 poison rows committed to the orders outbox');
    context.expectDeadLetters({
      outboxFailed: [tooLarge],
      consumerDeadLetters: [breaksContract, unknownType],
    });
  },
};

/**
 * Commit three ORDER_CREATED rows that decode but that no database could store, `spacingMs`
 * apart, each keyed by its own order id like a real ORDER_CREATED, so it lands among the load's
 * orders. Before the contracts matched the columns, each one failed in its handler the same way
 * on every delivery and blocked its partition for ever. (An event id that is not a UUID cannot
 * come through an outbox, whose ids are uuids: tests/consumers covers it with a raw producer.)
 */
function commitUnappliable(context: ScenarioContext, spacingMs: number): Promise<string[]> {
  const line = { sku: 'CB-505', quantity: 1, unitPriceCents: '900' };
  const payloads = [
    order({ totalCents: '1800', items: [line, line] }),
    order({ totalCents: '99999999999999999999' }),
    order({ items: [{ ...line, quantity: 3_000_000_000 }] }),
  ].map((payload) => ({ ...payload, customerId: 'poison-after-decode' }));
  const rows = payloads.map((payload) => ({ aggregateId: payload.orderId, type: 'ORDER_CREATED', payload }));
  return commitPoison(context, rows, spacingMs);
}

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
    const ids = await commitUnappliable(context, 1_000);
    context.fault(
      `${ids.length} decodable but unappliable ORDER_CREATED rows committed to the orders outbox`,
    );
    context.expectDeadLetters({ consumerDeadLetters: ids });
  },
};

export const poisonMidChunk: Scenario = {
  name: 'poison-mid-chunk',
  breaks:
    'inventory and billing stopped under load while three decodable but unappliable ORDER_CREATED rows are committed ' +
    'among the orders, then restarted: they catch up on a backlog, so each poison event sits inside a chunk of many',
  expectation:
    'Each poison event is dead-lettered alone with its reason; the rest of its chunk is applied, once, in order; ' +
    'no partition stays stuck.',
  inject: async (context) => {
    const consumers = ['inventory', 'billing'] as const;
    await context.sleep(3_000);
    await Promise.all(consumers.map((name) => context.stack.process(name).stop()));
    context.fault('inventory and billing stopped; their backlog grows');
    const ids = await commitUnappliable(context, 700);
    context.fault(`${ids.length} unappliable ORDER_CREATED rows committed among the orders`);
    context.expectDeadLetters({ consumerDeadLetters: ids });
    await context.sleep(1_500);
    await Promise.all(consumers.map((name) => context.stack.restart(name)));
    context.restored('inventory and billing restarted on a backlog');
  },
};
