import { Partitioners } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { partitionOf } from '../src/kafka/partitioner.ts';

// partitionOf is the project's own murmur2, so no client is needed to place a key; kafkajs' copy of
// the Java client's partitioner is the independent reference here.
describe('partitionOf', () => {
  it('puts a key where kafkajs’ Java-compatible partitioner does', () => {
    const partitioner = Partitioners.DefaultPartitioner();
    for (const partitions of [1, 2, 3, 6, 7, 12, 64]) {
      const metadata = Array.from({ length: partitions }, (_, partitionId) => ({
        partitionErrorCode: 0,
        partitionId,
        leader: 1,
        replicas: [1],
        isr: [1],
      }));
      // Aggregate ids as the services write them, and byte keys of every length up to 40 (each
      // remainder of murmur2's four-byte blocks).
      const keys: (string | Buffer)[] = [
        ...Array.from({ length: 200 }, (_, i) => `0b9c6f2e-1f9a-4c1e-9d6a-${String(i).padStart(12, '0')}`),
        ...Array.from({ length: 41 }, (_, n) =>
          Buffer.from(Array.from({ length: n }, (_, i) => (i * 37 + n) % 256)),
        ),
      ];
      for (const key of keys) {
        expect(partitionOf(key, partitions)).toBe(
          partitioner({ topic: 't', partitionMetadata: metadata, message: { key, value: null } }),
        );
      }
    }
  });

  it('matches the Java client for keys whose partitions are known', () => {
    // Kafka's own test vectors for murmur2 (org.apache.kafka.common.utils.UtilsTest#testMurmur2):
    // toPositive(murmur2("21")) = -973932308 & 0x7fffffff; the partition is that modulo the count.
    expect(partitionOf('21', 1000)).toBe((-973932308 & 0x7fffffff) % 1000);
  });
});
