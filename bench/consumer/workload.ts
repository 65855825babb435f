/**
 * The work every variant does: the topic's N valid ORDER_CREATED v1 events, how a message becomes
 * an event (as runConsumer reads it), and the effect table the hand-written variants write.
 */
import { randomUUID } from 'node:crypto';
import type { EventEnvelope } from '@outbox/contracts';
import {
  DEMO_CATALOG,
  fromKafkaMessage,
  ORDER_CREATED,
  orderCreatedV1,
  toKafkaMessage,
} from '@outbox/contracts';
import { checkEventData } from '@outbox/inbox';
import type { Kafka, KafkaMessage } from 'kafkajs';

export const effectTableSql = `
  create table bench_effects (
    event_id    uuid primary key,
    order_id    uuid not null,
    total_cents bigint not null
  )`;
export const effectSql =
  'insert into bench_effects (event_id, order_id, total_cents) values ($1::uuid, $2::uuid, $3::bigint)';
export const effectsSql = `
  insert into bench_effects (event_id, order_id, total_cents)
  select * from unnest($1::uuid[], $2::uuid[], $3::bigint[])`;

/** What runConsumer does to every message before the handler sees it (its readEvent). */
export function readEvent(message: KafkaMessage): EventEnvelope {
  return checkEventData(fromKafkaMessage(message));
}

/** The demo catalog both services' migrations seed: the SKUs inventory stocks, in EUR. */
export const catalog = DEMO_CATALOG;

/** N valid ORDER_CREATED v1 events over `aggregates` aggregates, as the relay would publish them. */
export async function produce(kafka: Kafka, topic: string, count: number, aggregates: number): Promise<void> {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  try {
    for (let start = 0; start < count; start += 1000) {
      const messages = Array.from({ length: Math.min(1000, count - start) }, (_, j) => {
        const n = start + j;
        // One to three lines of the catalog, one or two units each (about two lines per order).
        const lines = Array.from({ length: 1 + (n % 3) }, (_, k) => {
          const product = catalog[(n + k) % catalog.length] as (typeof catalog)[number];
          return { ...product, quantity: 1 + ((n + k) % 2) };
        });
        const data = orderCreatedV1.parse({
          orderId: randomUUID(),
          customerId: `customer-${n % aggregates}`,
          currency: 'EUR',
          totalCents: String(lines.reduce((sum, line) => sum + line.quantity * line.unitPriceCents, 0)),
          items: lines.map((line) => ({
            sku: line.sku,
            quantity: line.quantity,
            unitPriceCents: String(line.unitPriceCents),
          })),
        });
        return toKafkaMessage({
          id: randomUUID(),
          source: '/orders',
          type: ORDER_CREATED,
          specversion: '1.0',
          time: new Date().toISOString(),
          subject: `agg-${n % aggregates}`,
          aggregatetype: 'order',
          schemaversion: 1,
          datacontenttype: 'application/json',
          data,
        });
      });
      await producer.sendBatch({ topicMessages: [{ topic, messages }], acks: -1 });
    }
  } finally {
    await producer.disconnect();
  }
}
