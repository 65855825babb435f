import { describe, expect, it } from 'vitest';
import { replicationWarning } from '../src/config.ts';

/**
 * KAFKA_REPLICATION_FACTOR defaults to 1, right for the one local broker; a process pointed at a
 * cluster with the default would create topics with one copy, lost with that broker. It says so at
 * start-up (the relay and the consumer services log it), without refusing to start.
 */
describe('replicationWarning', () => {
  it('names both variables when several brokers are listed and topics would get one replica', () => {
    const warning = replicationWarning({
      KAFKA_BROKERS: ['127.0.0.1:19192', '127.0.0.1:29192', '127.0.0.1:39192'],
      KAFKA_REPLICATION_FACTOR: 1,
    });
    expect(warning).toContain('KAFKA_REPLICATION_FACTOR=1');
    expect(warning).toContain('3 brokers in KAFKA_BROKERS');
  });

  it('says nothing for one broker, or for replicated topics', () => {
    expect(
      replicationWarning({ KAFKA_BROKERS: ['127.0.0.1:9092'], KAFKA_REPLICATION_FACTOR: 1 }),
    ).toBeUndefined();
    expect(
      replicationWarning({ KAFKA_BROKERS: ['a:1', 'b:1', 'c:1'], KAFKA_REPLICATION_FACTOR: 3 }),
    ).toBeUndefined();
  });
});
