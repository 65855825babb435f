import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokerRequests } from './brokerRequests.ts';

// Lines as Kafka 4.3's kafka.request.logger writes them at DEBUG (shortened to the fields read),
// and a line of another logger, which does not count.
const LINES = [
  '[17:04:59,880] DEBUG Completed request:{"requestHeader":{"requestApiKey":0,"requestApiVersion":7,"correlationId":294,"clientId":"relay-relay-orders","requestApiKeyName":"PRODUCE"},"request":{"acks":-1,"topicData":[{"name":"order.events","partitionData":[{"index":2,"recordsSizeInBytes":732}]}]},"localTimeMs":0.659} (logger)',
  '[17:04:59,932] DEBUG Completed request:{"requestHeader":{"requestApiKey":0,"requestApiVersion":7,"correlationId":297,"clientId":"relay-relay-orders","requestApiKeyName":"PRODUCE"},"request":{"acks":-1,"topicData":[{"name":"order.events","partitionData":[{"index":3,"recordsSizeInBytes":732},{"index":4,"recordsSizeInBytes":679},{"index":5,"recordsSizeInBytes":678}]}]},"localTimeMs":1.008} (logger)',
  '[17:05:00,163] DEBUG Completed request:{"requestHeader":{"requestApiKey":8,"requestApiVersion":5,"correlationId":38,"clientId":"orders","requestApiKeyName":"OFFSET_COMMIT"},"request":{},"localTimeMs":1.133} (logger)',
  '[17:05:00,001] INFO some other broker line (kafka.server.KafkaServer)',
];

describe("the broker's request log, counted", () => {
  it('counts only the window, per order by API and by client, with the partitions of each produce', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'broker-log-')), 'broker.log');
    const before = 'a line written before the window\n';
    writeFileSync(file, `${before}${LINES.join('\n')}\n`);
    const requests = brokerRequests(file, before.length, before.length + LINES.join('\n').length + 1, 2);
    expect(requests.perOrder).toEqual({ PRODUCE: 1, OFFSET_COMMIT: 0.5 });
    expect(requests.perOrderByClient).toEqual({
      'PRODUCE relay-relay-orders': 1,
      'OFFSET_COMMIT orders': 0.5,
    });
    expect(requests.producePartitions).toEqual({ 1: 1, 3: 1 });
    // Nothing before the window's start counts.
    expect(brokerRequests(file, 0, before.length, 2).perOrder).toEqual({});
  });
});
