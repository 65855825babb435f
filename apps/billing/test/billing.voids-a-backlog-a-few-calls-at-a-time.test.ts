// Catching up on a backlog, a chunk holds orders and their cancels side by side. The cancels'
// voids could not be made before the transaction (their authorizations were not recorded yet),
// so they ran inside it, one after another, each as slow as the provider. Billing now
// applies a chunk's creates and cancels as one run and makes the provider calls a few at a time:
// several at once, never more than PROVIDER_CALLS_AT_ONCE, and every effect still once. Through
// the real consumer loop, the shared Kafka broker and a migrated billing database.
import { randomBytes } from 'node:crypto';
import { toKafkaMessage } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { eventually } from '@outbox/devstack/testing/stack';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { createTestDatabase, queryOnce, type TestDatabase } from '@outbox/devstack/testing/test-database';
import { type EventConsumer, startEventConsumer } from '@outbox/inbox';
import { createPool, transactionOn } from '@outbox/runtime/database';
import { defaultDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { createKafka } from '@outbox/runtime/kafka/kafkajs';
import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_SOURCE } from '../src/authorizePayment.ts';
import { migrate } from '../src/db.ts';
import { billingHandlers } from '../src/handlers.ts';
import { PaymentProvider } from '../src/paymentProvider.ts';
import { PROVIDER_CALLS_AT_ONCE } from '../src/providerCalls.ts';
import { orderEvents } from './support.ts';

useLeakGuard();

const ORDERS = 16;
const LATENCY_MS = 150;

let db: TestDatabase;
let pool: pg.Pool;
let consumer: EventConsumer | undefined;
beforeAll(async () => {
  db = await createTestDatabase('billing_backlog_voids');
  await migrate(db.url);
  pool = createPool(db.url, defaultDatabaseTimeouts);
});
afterAll(async () => {
  await consumer?.stop();
  await pool?.end();
  await db?.drop();
});

/** The simulated provider, counting its calls in flight, most at once per kind. */
class CountingProvider extends PaymentProvider {
  readonly peak = { authorize: 0, void: 0 };
  readonly voided: string[] = [];
  readonly #inFlight = { authorize: 0, void: 0 };
  constructor() {
    super({ limitCents: 1_000_000n, faultRate: 0, latencyMs: LATENCY_MS });
  }
  async #counted<T>(kind: 'authorize' | 'void', call: () => Promise<T>): Promise<T> {
    this.#inFlight[kind] += 1;
    this.peak[kind] = Math.max(this.peak[kind], this.#inFlight[kind]);
    try {
      return await call();
    } finally {
      this.#inFlight[kind] -= 1;
    }
  }
  override authorize(request: Parameters<PaymentProvider['authorize']>[0]) {
    return this.#counted('authorize', () => super.authorize(request));
  }
  override void(authorizationId: string) {
    return this.#counted('void', async () => {
      await super.void(authorizationId);
      this.voided.push(authorizationId);
    });
  }
}

describe('billing catching up on orders and their cancels', () => {
  it('voids a chunk several at a time, at most PROVIDER_CALLS_AT_ONCE, each order once', {
    timeout: 120_000,
  }, async () => {
    const prefix = `billing-backlog-${randomBytes(4).toString('hex')}.`;
    const topic = `${prefix}order.events`;
    const orders = Array.from({ length: ORDERS }, () => orderEvents());
    const kafka = createKafka({
      clientId: prefix,
      brokers: sharedKafkaBrokers(),
      logger: pino({ level: 'silent' }),
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [topic, `${topic}.dlt`].map((name) => ({ topic: name, numPartitions: 1 })),
    });
    await admin.disconnect();
    // The backlog, on one partition: each order created, then cancelled.
    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    await producer.send({
      topic,
      acks: -1,
      messages: orders.flatMap(({ created, cancelled }) => [created, cancelled]).map(toKafkaMessage),
    });
    await producer.disconnect();

    const provider = new CountingProvider();
    consumer = startEventConsumer({
      source: EVENT_SOURCE,
      groupId: `${prefix}billing`,
      kafka: { brokers: sharedKafkaBrokers(), topicPrefix: prefix, topicLayout: { partitions: 1 } },
      aggregateTypes: ['order'],
      transaction: transactionOn(pool),
      handlers: billingHandlers(pool, provider),
      logger: pino({ level: 'silent' }),
      registry: createMetricsRegistry(`${prefix}billing`),
      retry: { baseMs: 50, capMs: 500 },
    });

    const ids = orders.map((order) => order.orderId);
    const statuses = async () =>
      await queryOnce<{ status: string }>(
        db.url,
        'select status from payments where order_id = any($1::uuid[])',
        [ids],
      );
    await eventually('every order is voided', async () =>
      (await statuses()).filter((row) => row.status === 'VOIDED').length === ORDERS ? true : undefined,
    );

    expect(provider.peak.void).toBeGreaterThan(1);
    expect(provider.peak.void).toBeLessThanOrEqual(PROVIDER_CALLS_AT_ONCE);
    expect(provider.peak.authorize).toBeLessThanOrEqual(PROVIDER_CALLS_AT_ONCE);
    // Once in effect: one authorization and one void replied per order, each authorization voided.
    const replies = await queryOnce<{ event_type: string; n: number }>(
      db.url,
      `select event_type, count(*)::int as n from outbox where aggregate_id = any($1::text[])
        group by event_type order by event_type`,
      [ids],
    );
    expect(replies).toEqual([
      { event_type: 'PAYMENT_AUTHORIZED', n: ORDERS },
      { event_type: 'PAYMENT_VOIDED', n: ORDERS },
    ]);
    expect(new Set(provider.voided).size).toBe(ORDERS);
    expect(consumer.health()).toMatchObject({ status: 'ok', applied: 2 * ORDERS, deadLettered: 0 });
  });
});
