import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Scenario } from '../scenario.ts';

/** A valid ORDER_CREATED payload, to be spoiled in different ways. */
const order = (orderId: string) => ({
  orderId,
  customerId: 'poison',
  currency: 'EUR',
  totalCents: '900',
  items: [{ sku: 'CB-505', quantity: 1, unitPriceCents: '900' }],
});

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
    const tooLarge = randomUUID();
    const breaksContract = randomUUID();
    const unknownType = randomUUID();
    const client = new pg.Client({ connectionString: context.stack.databases.orders.url });
    await client.connect();
    try {
      const insert = `
        insert into outbox (id, source, aggregate_type, aggregate_id, event_type, schema_version, payload)
        values ($1::uuid, '/chaos', 'order', $2, $3, 1, $4::jsonb)`;
      await client.query(insert, [
        tooLarge,
        randomUUID(),
        'ORDER_CREATED',
        JSON.stringify({ ...order(randomUUID()), note: 'x'.repeat(2 * 1024 * 1024) }),
      ]);
      await client.query(insert, [
        breaksContract,
        randomUUID(),
        'ORDER_CREATED',
        JSON.stringify({ ...order('not-a-uuid'), totalCents: -1 }),
      ]);
      await client.query(insert, [
        unknownType,
        randomUUID(),
        'ORDER_TELEPORTED',
        JSON.stringify(order(randomUUID())),
      ]);
    } finally {
      await client.end();
    }
    context.fault('3 poison rows committed to the orders outbox');
    context.expectDeadLetters({
      outboxFailed: [tooLarge],
      consumerDeadLetters: [breaksContract, unknownType],
    });
  },
};
