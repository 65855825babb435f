import { createKafkaClient, type KafkaClientName } from '@outbox/runtime/kafka';
import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
} from 'kafkajs';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { classifyPublishError } from '../src/engine/publishErrors.ts';

// Real kafkajs error objects, built the way kafkajs builds them (protocol/error.js, retry/index.js).
const protocolError = (type: string, code: number, retriable: boolean) =>
  new KafkaJSProtocolError({ message: `broker said ${type}`, type, code, retriable } as unknown as Error);

describe('classifyPublishError', () => {
  it('a connection error: the broker is unavailable', () => {
    const error = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092', {
      broker: '127.0.0.1:9092',
      code: 'ECONNREFUSED',
    } as never);
    expect(error.name).toBe('KafkaJSConnectionError');
    expect(classifyPublishError(error)).toBe('unavailable');
  });

  it('retries exhausted on a connection error: unavailable (looks at the cause)', () => {
    const cause = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092');
    const error = new KafkaJSNumberOfRetriesExceeded(cause, { retryCount: 3, retryTime: 2000 });
    expect(error.name).toBe('KafkaJSNumberOfRetriesExceeded');
    expect(classifyPublishError(error)).toBe('unavailable');
  });

  it('a retriable protocol error (leader election): unavailable', () => {
    expect(classifyPublishError(protocolError('LEADER_NOT_AVAILABLE', 5, true))).toBe('unavailable');
    expect(classifyPublishError(protocolError('NOT_LEADER_FOR_PARTITION', 6, true))).toBe('unavailable');
  });

  it('MESSAGE_TOO_LARGE: permanent, also when kafkajs wraps it as non-retriable', () => {
    const tooLarge = protocolError('MESSAGE_TOO_LARGE', 10, false);
    expect(tooLarge.name).toBe('KafkaJSProtocolError');
    expect(classifyPublishError(tooLarge)).toBe('permanent');
    // retry/index.js: `new KafkaJSNonRetriableError(e, { cause: e.cause || e })` (the typings omit the option).
    const NonRetriable = KafkaJSNonRetriableError as unknown as new (e: Error, o: { cause: Error }) => Error;
    expect(classifyPublishError(new NonRetriable(tooLarge, { cause: tooLarge }))).toBe('permanent');
    expect(classifyPublishError(protocolError('RECORD_LIST_TOO_LARGE', 18, false))).toBe('permanent');
  });

  it('a plain Error, or something that is not an Error: transient', () => {
    expect(classifyPublishError(new Error('something odd'))).toBe('transient');
    expect(classifyPublishError('a string')).toBe('transient');
    expect(classifyPublishError(undefined)).toBe('transient');
  });

  it('a non-retriable protocol error that is not about the event: transient', () => {
    expect(classifyPublishError(protocolError('OUT_OF_ORDER_SEQUENCE_NUMBER', 45, false))).toBe('transient');
  });
});

// What each client really throws when no broker answers (a port nothing listens on): the relay
// must call it unavailable, or a long outage would use up every event's attempts.
describe.each<KafkaClientName>(['kafkajs', 'platformatic'])(
  'a publish through %s with no broker to reach',
  (name) => {
    const client = createKafkaClient({
      client: name,
      clientId: `unreachable-${name}`,
      brokers: ['127.0.0.1:1'],
      logger: pino({ level: 'silent' }),
      retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 },
    });

    it('fails the send as unavailable', { timeout: 60_000 }, async () => {
      const producer = client.producer();
      const error = await producer
        .send([{ topic: 'unreachable', messages: [{ key: 'a', value: 'b', partition: 0 }] }])
        .catch((err: unknown) => err);
      await producer.disconnect().catch(() => undefined);
      expect(classifyPublishError(error)).toBe('unavailable');
    });

    it('fails the admin calls as unavailable', { timeout: 60_000 }, async () => {
      const admin = client.admin();
      const error = await admin
        .connect()
        .then(() => admin.listTopics())
        .catch((err: unknown) => err);
      await admin.disconnect().catch(() => undefined);
      expect(classifyPublishError(error)).toBe('unavailable');
    });
  },
);
