import { readFileSync } from 'node:fs';
import { type AsyncAPIDocumentInterface, DiagnosticSeverity, Parser } from '@asyncapi/parser';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { asyncApiPath, renderAsyncApi } from '../asyncapi/generate.ts';
import { jsonSchemaName, toEventJsonSchema } from '../src/contracts/jsonSchema.ts';
import { ORDER_CREATED, type OrderCreatedV1, orderCreatedV1 } from '../src/contracts/orderCreated.ts';
import { eventSchemas } from '../src/contracts/registry.ts';
import { toKafkaMessage } from '../src/kafka/cloudEvents.ts';
import { type OutboxRow, toEnvelope } from '../src/outbox/outboxRow.ts';

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
    const operations = document
      .operations()
      .all()
      .map((op) => [op.id(), op.action(), op.channels().all()[0]?.address(), op.messages().all().length]);
    expect(operations).toEqual([
      ['publishOrderEvents', 'send', 'order.events', 1],
      ['consumeOrderEvents', 'receive', 'order.events', 1],
    ]);
    const orderCreated = document.messages().get('OrderCreated');
    expect(orderCreated?.correlationId()?.location()).toBe('$message.header#/ce_id');
    expect(orderCreated?.contentType()).toBe('application/json');
  });

  describe('is in step with the zod contracts', () => {
    it('has the payload schemas generate.ts writes (else run `node packages/events/asyncapi/generate.ts`)', () => {
      expect(
        renderAsyncApi(source),
        'asyncapi.yaml is stale: run `node packages/events/asyncapi/generate.ts`',
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
      for (const msg of document.messages().all()) {
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
  });
});
