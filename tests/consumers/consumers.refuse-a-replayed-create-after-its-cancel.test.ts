// A dead-letter replay reorders an order's events: its ORDER_CANCELLED was applied, then its
// ORDER_CREATED comes back from the dead-letter topic. Through the real processes, topics and
// relays: inventory and billing remember the cancel and refuse the late create (no stock reserved,
// no payment authorized for a cancelled order), and still answer once, so the order ends with
// both sides' refusals recorded and no new decision.
import { randomUUID } from 'node:crypto';
import {
  ORDER_CANCELLED,
  ORDER_CREATED,
  type OrderCancelledV1,
  type OrderCreatedV1,
  toKafkaMessage,
  topicFor,
} from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { orderEnvelope } from '@outbox/devstack/testing/order-envelope';
import { eventually, type Stack, startStack } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { queryOnce } from '@outbox/devstack/testing/test-database';
import { type Kafka, Partitioners } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getOrder, testKafka } from './support.ts';

useLeakGuard();

let stack: Stack;
let kafka: Kafka;
beforeAll(async () => {
  const brokers = sharedKafkaBrokers();
  stack = await startStack('replayed_create', brokers);
  kafka = testKafka(brokers);
});
afterAll(() => stack?.stop());

const stockOf = async (sku: string) =>
  (
    await queryOnce<{ available: number }>(
      stack.databases.inventory.url,
      'select available from stock where sku = $1',
      [sku],
    )
  )[0]?.available;

describe('a replayed ORDER_CREATED that arrives after its ORDER_CANCELLED', () => {
  it('reserves no stock, authorizes no payment, and both sides answer with a refusal', async () => {
    const orderId = randomUUID();
    const reason = 'saga timed out: no answer from inventory and billing within 300000 ms';
    // The order as orders knows it: placed, then cancelled (its own events were published long ago).
    await queryOnce(
      stack.databases.orders.url,
      `insert into orders (id, customer_id, currency, status, total_cents, cancel_reason, decided_at)
       values ($1, 'carol', 'EUR', 'CANCELLED', 8900, $2, now())`,
      [orderId, reason],
    );
    await queryOnce(
      stack.databases.orders.url,
      `insert into order_items (order_id, sku, quantity, unit_price_cents) values ($1, 'KB-101', 1, 8900)`,
      [orderId],
    );
    const before = await stockOf('KB-101');

    const created: OrderCreatedV1 = {
      orderId,
      customerId: 'carol',
      currency: 'EUR',
      totalCents: '8900',
      items: [{ sku: 'KB-101', quantity: 1, unitPriceCents: '8900' }],
    };
    const cancelled: OrderCancelledV1 = { orderId, reason };
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    try {
      // Same key, same partition: the cancel first, then the replayed create.
      await producer.send({
        topic: topicFor('order', stack.topicPrefix),
        acks: -1,
        messages: [
          toKafkaMessage(orderEnvelope(ORDER_CANCELLED, cancelled)),
          toKafkaMessage(orderEnvelope(ORDER_CREATED, created)),
        ],
      });
    } finally {
      await producer.disconnect();
    }

    const order = await eventually(
      'both refusals recorded by orders',
      async () => {
        const current = await getOrder(stack, orderId);
        return current.stockStatus && current.paymentStatus ? current : undefined;
      },
      60_000,
    );
    expect(order).toMatchObject({ status: 'CANCELLED', stockStatus: 'REJECTED', paymentStatus: 'DECLINED' });
    expect(await stockOf('KB-101')).toBe(before);
    const [reservation] = await queryOnce<{ status: string; reason: string }>(
      stack.databases.inventory.url,
      'select status, reason from reservations where order_id = $1',
      [orderId],
    );
    expect(reservation).toEqual({
      status: 'REJECTED',
      reason: 'order was cancelled before inventory received it',
    });
    const [payment] = await queryOnce<{ status: string; authorization_id: string | null }>(
      stack.databases.billing.url,
      'select status, authorization_id from payments where order_id = $1',
      [orderId],
    );
    expect(payment).toEqual({ status: 'DECLINED', authorization_id: null });
    // Orders decided nothing new: the order was already cancelled.
    const decisions = await queryOnce(
      stack.databases.orders.url,
      `select 1 from outbox where aggregate_id = $1 and event_type in ('ORDER_CONFIRMED', 'ORDER_CANCELLED')`,
      [orderId],
    );
    expect(decisions).toEqual([]);
  });
});
