import type { IHeaders, KafkaMessage, Message } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { fromKafkaMessage, MalformedEventError, toKafkaMessage } from '../src/cloudEvents.ts';
import type { EventEnvelope } from '../src/envelope.ts';

const event: EventEnvelope = {
  id: '6f1c7c1e-2b7a-4d0e-9a51-0c7f8d3e2a10',
  source: '/orders',
  type: 'ORDER_CREATED',
  specversion: '1.0',
  time: '2025-01-02T03:04:05.678Z',
  subject: 'b1f0a4d2-93c5-4a57-8d3e-5f1a2b3c4d5e',
  aggregatetype: 'order',
  schemaversion: 1,
  datacontenttype: 'application/json',
  data: { orderId: 'b1f0a4d2-93c5-4a57-8d3e-5f1a2b3c4d5e', totalCents: '20500', items: [{ sku: 'KB-101' }] },
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  tracestate: 'vendor=value',
};

/** What a kafkajs consumer hands over: key, value and every header value as Buffers. */
function asDelivered(message: Message): Pick<KafkaMessage, 'headers' | 'value'> {
  const headers: IHeaders = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value !== undefined) headers[name] = Buffer.from(String(value));
  }
  const value = message.value === null ? null : Buffer.from(String(message.value));
  return { headers, value };
}

/** A delivered message for `event` with some headers replaced (undefined removes one). */
function deliveredWith(overrides: Record<string, string | undefined>, value?: Buffer | null) {
  const delivered = asDelivered(toKafkaMessage(event));
  const headers = { ...delivered.headers };
  for (const [name, replacement] of Object.entries(overrides)) {
    if (replacement === undefined) delete headers[name];
    else headers[name] = Buffer.from(replacement);
  }
  return { headers, value: value === undefined ? delivered.value : value };
}

describe('CloudEvents Kafka binding (binary content mode)', () => {
  it('maps attributes to ce_* headers, data to the value and the subject to the key', () => {
    const message = toKafkaMessage(event);
    expect(message.key).toBe(event.subject);
    expect(JSON.parse(String(message.value))).toEqual(event.data);
    expect(message.headers).toEqual({
      ce_specversion: '1.0',
      ce_id: event.id,
      ce_source: '/orders',
      ce_type: 'ORDER_CREATED',
      ce_time: event.time,
      ce_subject: event.subject,
      ce_aggregatetype: 'order',
      ce_schemaversion: '1',
      'content-type': 'application/json',
      ce_traceparent: event.traceparent,
      ce_tracestate: event.tracestate,
      traceparent: event.traceparent,
      tracestate: event.tracestate,
    });
  });

  it('leaves out the trace headers when the event has no trace context', () => {
    const { traceparent: _p, tracestate: _s, ...untraced } = event;
    const headers = toKafkaMessage(untraced).headers ?? {};
    expect(Object.keys(headers).filter((name) => name.includes('trace'))).toEqual([]);
    expect(fromKafkaMessage(asDelivered(toKafkaMessage(untraced)))).toEqual(untraced);
  });

  it('reads back exactly the event it wrote, from Buffers as kafkajs delivers them', () => {
    expect(fromKafkaMessage(asDelivered(toKafkaMessage(event)))).toEqual(event);
  });

  it('reads a trace header without a value as absent, as the CDC relay sends it for an untraced event', () => {
    const { traceparent: _p, tracestate: _s, ...untraced } = event;
    const delivered = asDelivered(toKafkaMessage(untraced));
    // kafkajs delivers a header whose value is null (length -1) as null.
    const headers = { ...delivered.headers, ce_traceparent: null, traceparent: null } as unknown as IHeaders;
    expect(fromKafkaMessage({ ...delivered, headers })).toEqual(untraced);
  });

  it('reads the first value of a repeated header', () => {
    const delivered = asDelivered(toKafkaMessage(event));
    const headers = { ...delivered.headers, ce_type: [Buffer.from('ORDER_CREATED'), Buffer.from('OTHER')] };
    expect(fromKafkaMessage({ ...delivered, headers }).type).toBe('ORDER_CREATED');
  });

  describe('refuses a message that is not a valid event with MalformedEventError', () => {
    const cases: [name: string, message: Pick<KafkaMessage, 'headers' | 'value'>, reason: RegExp][] = [
      ['a missing ce_id header', deliveredWith({ ce_id: undefined }), /missing header ce_id/],
      ['a missing ce_type header', deliveredWith({ ce_type: undefined }), /missing header ce_type/],
      ['a missing ce_specversion header', deliveredWith({ ce_specversion: undefined }), /ce_specversion/],
      ['an empty ce_source header', deliveredWith({ ce_source: '' }), /missing header ce_source/],
      ['no headers at all', { headers: undefined, value: Buffer.from('{}') }, /missing header/],
      ['a value that is not JSON', deliveredWith({}, Buffer.from('{not json')), /not JSON/],
      ['an empty value', deliveredWith({}, null), /empty message value/],
      ['specversion 0.3', deliveredWith({ ce_specversion: '0.3' }), /unsupported ce_specversion/],
      ['schemaversion 1.5', deliveredWith({ ce_schemaversion: '1.5' }), /not an integer/],
      ['schemaversion "one"', deliveredWith({ ce_schemaversion: 'one' }), /not an integer/],
    ];

    it.each(cases)('%s', (_name, message, reason) => {
      let thrown: unknown;
      try {
        fromKafkaMessage(message);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(MalformedEventError);
      expect((thrown as MalformedEventError).code).toBe('MALFORMED_EVENT');
      expect((thrown as Error).message).toMatch(reason);
    });
  });
});
