import { readFileSync } from 'node:fs';
import { type AsyncAPIDocumentInterface, DiagnosticSeverity, Parser } from '@asyncapi/parser';
import {
  eventSchemas,
  jsonSchemaName,
  ORDER_CREATED,
  type OrderCreatedV1,
  orderCreatedV1,
  toEventJsonSchema,
  toKafkaMessage,
} from '@outbox/contracts';
import { asyncApiPath, renderAsyncApi } from '@outbox/contracts/asyncapi';
import { fromDeadLetterMessage, toDeadLetterMessage } from '@outbox/inbox';
import { type OutboxRow, toEnvelope } from '@outbox/outbox';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { KafkaMessage } from 'kafkajs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

type JsonObject = Record<string, unknown>;

const source = readFileSync(asyncApiPath, 'utf8');
/** The document exactly as checked in, without the parser's additions. */
const raw = parseYaml(source) as { components: { schemas: Record<string, JsonObject> } };

/** The parser marks every schema it has seen with `x-parser-*` keys; they are not part of the contract. */
function withoutParserKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutParserKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !key.startsWith('x-parser-'))
      .map(([key, inner]) => [key, withoutParserKeys(inner)]),
  );
}

/** The `const` a message's header schema pins a header to, looking into `allOf` branches too. */
function headerConst(headers: unknown, name: string): unknown {
  const schema = headers as { properties?: Record<string, { const?: unknown }>; allOf?: unknown[] };
  const own = schema.properties?.[name]?.const;
  if (own !== undefined) return own;
  for (const branch of schema.allOf ?? []) {
    const found = headerConst(branch, name);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** `ORDER_CREATED@1` */
const key = (type: string, version: number) => `${type}@${version}`;

/** The one message that is not an event type: what `<topic>.dlt` carries. */
const DEAD_LETTER = 'DeadLetter';

/** Who publishes each aggregate type's events, as the services' writeEvent calls say. */
const producers: Record<string, { source: string; aggregateType: string }> = {
  ORDER_CREATED: { source: '/orders', aggregateType: 'order' },
  ORDER_CONFIRMED: { source: '/orders', aggregateType: 'order' },
  ORDER_CANCELLED: { source: '/orders', aggregateType: 'order' },
  STOCK_RESERVED: { source: '/inventory', aggregateType: 'reservation' },
  STOCK_REJECTED: { source: '/inventory', aggregateType: 'reservation' },
  STOCK_RELEASED: { source: '/inventory', aggregateType: 'reservation' },
  PAYMENT_AUTHORIZED: { source: '/billing', aggregateType: 'payment' },
  PAYMENT_DECLINED: { source: '/billing', aggregateType: 'payment' },
  PAYMENT_VOIDED: { source: '/billing', aggregateType: 'payment' },
};

const registered = Object.entries(eventSchemas).flatMap(([type, versions]) =>
  Object.entries(versions).map(([version, schema]) => ({ type, version: Number(version), schema })),
);

const data: OrderCreatedV1 = orderCreatedV1.parse({
  orderId: 'b1f0a4d2-93c5-4a57-8d3e-5f1a2b3c4d5e',
  customerId: 'customer-42',
  currency: 'EUR',
  totalCents: '20500',
  items: [
    { sku: 'KB-101', quantity: 2, unitPriceCents: '8900' },
    { sku: 'MS-202', quantity: 1, unitPriceCents: '2700' },
  ],
});

/** An outbox row as the relay claims it, turned into a Kafka message the way the relay does. */
const row: OutboxRow = {
  id: '6f1c7c1e-2b7a-4d0e-9a51-0c7f8d3e2a10',
  seq: '1',
  source: '/orders',
  aggregate_type: 'order',
  aggregate_id: data.orderId,
  event_type: ORDER_CREATED,
  schema_version: 1,
  payload: data,
  headers: {
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    tracestate: 'vendor=value',
  },
  attempts: 0,
  created_at: new Date('2025-01-02T03:04:05.678Z'),
};
const message = toKafkaMessage(toEnvelope(row));
const headers: Record<string, string> = Object.fromEntries(
  Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]),
);
const payload: unknown = JSON.parse(String(message.value));

describe('asyncapi.yaml', () => {
  let document: AsyncAPIDocumentInterface;

  beforeAll(async () => {
    const { document: parsed, diagnostics } = await new Parser().parse(source, { source: asyncApiPath });
    // Anything below error severity (e.g. "AsyncAPI 3.1.0 exists") is advice, not a broken document.
    const errors = diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error);
    expect(errors.map((d) => `${d.code} at ${d.path.join('.')}: ${d.message}`)).toEqual([]);
    if (!parsed) throw new Error('the AsyncAPI parser returned no document');
    document = parsed;
  });

  it('is a valid AsyncAPI 3.0.0 document with the expected server, channel and operations', () => {
    expect(document.version()).toBe('3.0.0');
    const server = document.servers().get('local');
    expect([server?.host(), server?.protocol()]).toEqual(['127.0.0.1:9092', 'kafka']);
    expect(document.channels().get('orderEvents')?.address()).toBe('order.events');
    expect(
      document
        .channels()
        .all()
        .map((channel) => channel.address()),
    ).toEqual([
      'order.events',
      'reservation.events',
      'payment.events',
      'order.events.dlt',
      'reservation.events.dlt',
      'payment.events.dlt',
    ]);
    const operations = document
      .operations()
      .all()
      .map((op) => [
        op.id(),
        op.action(),
        op.channels().all()[0]?.address(),
        op
          .messages()
          .all()
          .map((msg) => msg.name()),
      ]);
    expect(operations).toEqual([
      ['publishOrderEvents', 'send', 'order.events', ['ORDER_CREATED', 'ORDER_CONFIRMED', 'ORDER_CANCELLED']],
      [
        'publishReservationEvents',
        'send',
        'reservation.events',
        ['STOCK_RESERVED', 'STOCK_REJECTED', 'STOCK_RELEASED'],
      ],
      [
        'publishPaymentEvents',
        'send',
        'payment.events',
        ['PAYMENT_AUTHORIZED', 'PAYMENT_DECLINED', 'PAYMENT_VOIDED'],
      ],
      // Inventory and billing handle these two; ORDER_CONFIRMED is ignored.
      ['consumeOrderEvents', 'receive', 'order.events', ['ORDER_CREATED', 'ORDER_CANCELLED']],
      [
        'consumeReservationEvents',
        'receive',
        'reservation.events',
        ['STOCK_RESERVED', 'STOCK_REJECTED', 'STOCK_RELEASED'],
      ],
      [
        'consumePaymentEvents',
        'receive',
        'payment.events',
        ['PAYMENT_AUTHORIZED', 'PAYMENT_DECLINED', 'PAYMENT_VOIDED'],
      ],
      ['deadLetterOrderEvents', 'send', 'order.events.dlt', [DEAD_LETTER]],
      ['deadLetterReservationEvents', 'send', 'reservation.events.dlt', [DEAD_LETTER]],
      ['deadLetterPaymentEvents', 'send', 'payment.events.dlt', [DEAD_LETTER]],
    ]);
    const orderCreated = document.messages().get('OrderCreated');
    expect(orderCreated?.correlationId()?.location()).toBe('$message.header#/ce_id');
    expect(orderCreated?.contentType()).toBe('application/json');
  });

  describe('is in step with the zod contracts', () => {
    it('has the payload schemas generate.ts writes (else run `node packages/contracts/asyncapi/generate.ts`)', () => {
      expect(
        renderAsyncApi(source),
        'asyncapi.yaml is stale: run `node packages/contracts/asyncapi/generate.ts`',
      ).toBe(source);
    });

    // z.toJSONSchema(schema) with one normalisation, made in toEventJsonSchema: target draft-07 and
    // no `$schema` key, because AsyncAPI 3.0's default schema format is a superset of draft-07 and
    // declares the dialect for the whole document. Nothing else is changed, so a difference here
    // is a real difference between the code and the published contract.
    it.each(registered)(
      'components.schemas has $type v$version exactly as zod describes it',
      ({ type, version, schema }) => {
        expect(raw.components.schemas[jsonSchemaName(type, version)]).toEqual(toEventJsonSchema(schema));
      },
    );

    it('has one message per registered type and version, and none other, each with its payload schema', () => {
      const documented = new Map<string, unknown>();
      for (const msg of document
        .messages()
        .all()
        .filter((m) => m.id() !== DEAD_LETTER)) {
        const headerSchema = withoutParserKeys(msg.headers()?.json());
        const type = headerConst(headerSchema, 'ce_type');
        const version = Number(headerConst(headerSchema, 'ce_schemaversion'));
        expect(typeof type, `message ${msg.id()} pins ce_type`).toBe('string');
        expect(Number.isInteger(version), `message ${msg.id()} pins ce_schemaversion`).toBe(true);
        expect(msg.name(), `message ${msg.id()} is named after its type`).toBe(type);
        documented.set(key(String(type), version), withoutParserKeys(msg.payload()?.json()));
      }
      expect([...documented.keys()].sort()).toEqual(
        registered.map(({ type, version }) => key(type, version)).sort(),
      );
      for (const { type, version, schema } of registered) {
        expect(documented.get(key(type, version)), key(type, version)).toEqual(toEventJsonSchema(schema));
      }
    });

    it('puts each event message on the topic of its aggregate type, and dead letters only on `.dlt` topics', () => {
      for (const channel of document.channels().all()) {
        const address = channel.address() ?? '';
        for (const msg of channel.messages().all()) {
          if (address.endsWith('.dlt')) {
            expect(msg.id(), `message ${msg.id()} on ${address}`).toBe(DEAD_LETTER);
            continue;
          }
          const aggregateType = headerConst(withoutParserKeys(msg.headers()?.json()), 'ce_aggregatetype');
          expect(address, `message ${msg.id()}`).toBe(`${String(aggregateType)}.events`);
        }
      }
    });
  });

  describe('describes what the relay really sends', () => {
    let validateHeaders: ValidateFunction;
    let validatePayload: ValidateFunction;
    let validateKey: ValidateFunction;

    beforeAll(() => {
      // strict: an unknown keyword or a type mismatch in the document's schemas is an error, not a log line.
      const ajv = new Ajv({ allErrors: true, strict: true });
      addFormats.default(ajv);
      const orderCreated = document.messages().get('OrderCreated');
      if (!orderCreated) throw new Error('no OrderCreated message');
      validateHeaders = ajv.compile(withoutParserKeys(orderCreated.headers()?.json()) as JsonObject);
      validatePayload = ajv.compile(withoutParserKeys(orderCreated.payload()?.json()) as JsonObject);
      const binding = orderCreated.bindings().get('kafka')?.value() as { key: JsonObject };
      validateKey = ajv.compile(withoutParserKeys(binding.key) as JsonObject);
    });

    it('an ORDER_CREATED message built by toKafkaMessage matches the header, payload and key schemas', () => {
      expect(validateHeaders(headers), JSON.stringify(validateHeaders.errors)).toBe(true);
      expect(validatePayload(payload), JSON.stringify(validatePayload.errors)).toBe(true);
      expect(validateKey(String(message.key)), JSON.stringify(validateKey.errors)).toBe(true);
    });

    it('so does an untraced one (the trace headers are optional)', () => {
      const untraced = toKafkaMessage(toEnvelope({ ...row, headers: {} }));
      expect(Object.keys(untraced.headers ?? {})).not.toContain('traceparent');
      expect(validateHeaders(untraced.headers)).toBe(true);
    });

    it.each([
      ['without ce_id', { ce_id: undefined }],
      ['with another ce_type', { ce_type: 'ORDER_CANCELLED' }],
      ['with schema version 2', { ce_schemaversion: '2' }],
      ['with ce_specversion 0.3', { ce_specversion: '0.3' }],
      ['with a time that is not RFC 3339', { ce_time: 'yesterday' }],
      ['with a malformed traceparent', { traceparent: 'not-a-trace' }],
    ])('rejects headers %s', (_name, overrides: Record<string, string | undefined>) => {
      const changed: Record<string, string> = { ...headers };
      for (const [name, value] of Object.entries(overrides)) {
        if (value === undefined) delete changed[name];
        else changed[name] = value;
      }
      expect(validateHeaders(changed)).toBe(false);
    });

    it.each([
      ['money as a number', { ...data, totalCents: 205.0 }],
      ['an unknown field', { ...data, discount: '0' }],
      ['no items', { ...data, items: [] }],
      ['an order id that is not a UUID', { ...data, orderId: '42' }],
    ])('rejects a payload with %s, as the zod contract does', (_name, bad) => {
      expect(orderCreatedV1.safeParse(bad).success).toBe(false);
      expect(validatePayload(bad)).toBe(false);
    });

    it("the document's own examples match its schemas", () => {
      const examples = document.messages().get('OrderCreated')?.examples().all() ?? [];
      expect(examples.length).toBeGreaterThan(0);
      for (const example of examples) {
        expect(validateHeaders(example.headers()), JSON.stringify(validateHeaders.errors)).toBe(true);
        expect(validatePayload(example.payload()), JSON.stringify(validatePayload.errors)).toBe(true);
        expect(orderCreatedV1.safeParse(example.payload()).success).toBe(true);
      }
    });

    it('so do the examples of every other message', () => {
      const ajv = new Ajv({ allErrors: true, strict: true });
      addFormats.default(ajv);
      for (const msg of document.messages().all()) {
        const checkHeaders = ajv.compile(withoutParserKeys(msg.headers()?.json()) as JsonObject);
        const checkPayload = ajv.compile(withoutParserKeys(msg.payload()?.json()) as JsonObject);
        for (const example of msg.examples().all()) {
          const name = `${msg.id()} example ${example.name()}`;
          expect(checkHeaders(example.headers()), `${name}: ${JSON.stringify(checkHeaders.errors)}`).toBe(
            true,
          );
          if (example.hasPayload()) {
            expect(checkPayload(example.payload()), `${name}: ${JSON.stringify(checkPayload.errors)}`).toBe(
              true,
            );
          }
        }
      }
    });
  });

  describe('pins the producer of every event type', () => {
    const ajv = new Ajv({ allErrors: true, strict: true });
    addFormats.default(ajv);
    const headersOf = (outboxRow: OutboxRow): Record<string, string> =>
      Object.fromEntries(
        Object.entries(toKafkaMessage(toEnvelope(outboxRow)).headers ?? {}).map(([name, value]) => [
          name,
          String(value),
        ]),
      );

    it.each(Object.entries(producers))('%s from %o', (type, { source: producer, aggregateType }) => {
      const msg = document
        .messages()
        .all()
        .find((m) => m.name() === type);
      if (!msg) throw new Error(`no message for ${type}`);
      const validate = ajv.compile(withoutParserKeys(msg.headers()?.json()) as JsonObject);
      const sent = headersOf({ ...row, source: producer, aggregate_type: aggregateType, event_type: type });
      expect(validate(sent), JSON.stringify(validate.errors)).toBe(true);
      expect(validate({ ...sent, ce_source: '/elsewhere' })).toBe(false);
      expect(validate({ ...sent, ce_aggregatetype: 'elsewhere' })).toBe(false);
    });
  });

  describe('describes what a consumer dead-letters', () => {
    let validateHeaders: ValidateFunction;
    let validateKey: ValidateFunction;
    // The ORDER_CREATED message as a consumer of order.events receives it (Buffers), refused by inventory.
    const received: KafkaMessage = {
      key: Buffer.from(String(message.key)),
      value: Buffer.from(String(message.value)),
      headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Buffer.from(value)])),
      offset: '1042',
      timestamp: '1735787045678',
      attributes: 0,
    };
    const deadLetter = toDeadLetterMessage(
      received,
      { topic: 'order.events', partition: 3, consumer: 'inventory' },
      'invalid ORDER_CREATED v1: items: expected array, received undefined',
    );
    const deadLetterHeaders: Record<string, string> = Object.fromEntries(
      Object.entries(deadLetter.headers ?? {}).map(([name, value]) => [name, String(value)]),
    );

    beforeAll(() => {
      const ajv = new Ajv({ allErrors: true, strict: true });
      addFormats.default(ajv);
      const msg = document.messages().get(DEAD_LETTER);
      if (!msg) throw new Error('no DeadLetter message');
      validateHeaders = ajv.compile(withoutParserKeys(msg.headers()?.json()) as JsonObject);
      const binding = msg.bindings().get('kafka')?.value() as { key: JsonObject };
      validateKey = ajv.compile(withoutParserKeys(binding.key) as JsonObject);
    });

    it('a message built by toDeadLetterMessage matches the header and key schemas', () => {
      expect(validateHeaders(deadLetterHeaders), JSON.stringify(validateHeaders.errors)).toBe(true);
      expect(validateKey(String(deadLetter.key)), JSON.stringify(validateKey.errors)).toBe(true);
    });

    it.each(['dlt_reason', 'dlt_topic', 'dlt_partition', 'dlt_offset', 'dlt_consumer', 'dlt_time'])(
      'rejects headers without %s',
      (name) => {
        const { [name]: _dropped, ...rest } = deadLetterHeaders;
        expect(validateHeaders(rest)).toBe(false);
      },
    );

    it('rejects a dlt_offset or dlt_time that is not what the consumer writes', () => {
      expect(validateHeaders({ ...deadLetterHeaders, dlt_offset: '-1' })).toBe(false);
      expect(validateHeaders({ ...deadLetterHeaders, dlt_time: 'yesterday' })).toBe(false);
    });

    it('a replay (fromDeadLetterMessage) gives back the original message, on dlt_topic', () => {
      const replay = fromDeadLetterMessage({
        ...received,
        headers: deadLetter.headers ?? {},
      } as KafkaMessage);
      expect(replay.topic).toBe('order.events');
      const replayedHeaders = Object.fromEntries(
        Object.entries(replay.message.headers ?? {}).map(([name, value]) => [name, String(value)]),
      );
      expect(replayedHeaders).toEqual(headers);
    });
  });
});
