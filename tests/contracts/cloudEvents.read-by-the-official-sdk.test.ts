import { randomUUID } from 'node:crypto';
import type { EventEnvelope } from '@outbox/contracts';
import { ORDER_CREATED, type OrderCreatedV1, toKafkaMessage } from '@outbox/contracts';
import { useLeakGuard } from '@outbox/devstack/testing/leak-guard';
import { sharedKafkaBrokers } from '@outbox/devstack/testing/test-broker';
import { ensureTopics } from '@outbox/runtime/kafka';
import { createKafka, KafkajsAdmin } from '@outbox/runtime/kafka/kafkajs';
import {
  type CloudEvent,
  Kafka as CloudEventsKafka,
  type KafkaMessage as CloudEventsKafkaMessage,
} from 'cloudevents';
import type { Consumer, KafkaMessage, Producer } from 'kafkajs';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The "Done when": a message produced for an order can be decoded by the `cloudevents`
// npm SDK's Kafka binding into an event with the right id, type, subject, data and traceparent.
// Real broker, real kafkajs producer and consumer: the SDK reads what actually came off the wire.

useLeakGuard();

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACESTATE = 'vendor=value';

const data: OrderCreatedV1 = {
  orderId: randomUUID(),
  customerId: 'customer-42',
  currency: 'EUR',
  totalCents: '20500',
  items: [
    { sku: 'KB-101', quantity: 2, unitPriceCents: '8900' },
    { sku: 'MS-202', quantity: 1, unitPriceCents: '2700' },
  ],
};

const envelope: EventEnvelope<OrderCreatedV1> = {
  id: randomUUID(),
  source: '/orders',
  type: ORDER_CREATED,
  specversion: '1.0',
  time: '2025-01-02T03:04:05.678Z',
  subject: data.orderId,
  aggregatetype: 'order',
  schemaversion: 1,
  datacontenttype: 'application/json',
  data,
  traceparent: TRACEPARENT,
  tracestate: TRACESTATE,
};

/**
 * kafkajs delivers header values as Buffers (or arrays of them for repeated headers); the SDK's
 * `Headers` are strings. This is the whole adapter a consumer using the SDK needs.
 */
function toCloudEventsMessage(message: KafkaMessage): CloudEventsKafkaMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) headers[name] = first.toString();
  }
  return {
    headers,
    key: message.key ?? '',
    value: message.value,
    body: message.value,
    timestamp: message.timestamp,
  };
}

describe('the cloudevents SDK reads what we publish', () => {
  const kafka = createKafka({
    clientId: 'events-cloudevents-sdk-test',
    brokers: sharedKafkaBrokers(),
    logger: pino({ level: 'silent' }),
  });
  const topic = `cloudevents-sdk-${randomUUID()}`;
  let producer: Producer | undefined;
  let consumer: Consumer | undefined;
  let received: KafkaMessage;

  beforeAll(async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      await ensureTopics(new KafkajsAdmin(admin), [topic], { partitions: 1 });
    } finally {
      await admin.disconnect();
    }

    producer = kafka.producer({ idempotent: true });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [toKafkaMessage(envelope)] });

    consumer = kafka.consumer({ groupId: `cloudevents-sdk-${randomUUID()}` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    received = await new Promise<KafkaMessage>((resolve) => {
      void consumer?.run({
        eachMessage: async ({ message }) => resolve(message),
      });
    });
  });

  afterAll(async () => {
    await consumer?.disconnect();
    await producer?.disconnect();
  });

  it('decodes the message into an event with the right attributes and data', () => {
    const message = toCloudEventsMessage(received);
    expect(CloudEventsKafka.isEvent(message)).toBe(true);
    const decoded = CloudEventsKafka.toEvent(message);
    if (Array.isArray(decoded)) throw new Error('expected one event, got a batch');
    const event = decoded as CloudEvent<OrderCreatedV1>;

    expect(event.specversion).toBe('1.0');
    expect(event.id).toBe(envelope.id);
    expect(event.type).toBe(ORDER_CREATED);
    expect(event.source).toBe('/orders');
    expect(event.subject).toBe(data.orderId);
    expect(event.time).toBe(envelope.time);
    expect(event.datacontenttype).toBe('application/json');
    expect(event.data).toEqual(data);
    // Our extensions come through as extension attributes, as strings (headers are strings).
    expect(event.aggregatetype).toBe('order');
    expect(event.schemaversion).toBe('1');
    // The Kafka key becomes the SDK's `partitionkey` extension: the aggregate id.
    expect(String(event.partitionkey)).toBe(data.orderId);
    // The SDK validates the event it built (spec-required attributes, formats).
    expect(event.validate()).toBe(true);
  });

  it('carries the creation trace context as the traceparent extension and in the W3C headers', () => {
    const message = toCloudEventsMessage(received);
    const event = CloudEventsKafka.toEvent(message) as CloudEvent<OrderCreatedV1>;
    // ce_traceparent/ce_tracestate: the CloudEvents distributed-tracing extension.
    expect(event.traceparent).toBe(TRACEPARENT);
    expect(event.tracestate).toBe(TRACESTATE);
    // The plain W3C headers, for OpenTelemetry propagation, carry the same context.
    expect(message.headers.traceparent).toBe(TRACEPARENT);
    expect(message.headers.tracestate).toBe(TRACESTATE);
  });
});
