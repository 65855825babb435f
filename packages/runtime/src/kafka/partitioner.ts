/**
 * The partition of a key: murmur2, as the Java client computes it (and kafkajs' DefaultPartitioner,
 * which copies it), so an aggregate's events land on the same partition whichever client produced
 * them. The sender sets it on each message explicitly, so it knows which partitions must
 * acknowledge the send (acknowledgement.ts).
 */
export function partitionOf(key: string | Buffer, partitions: number): number {
  return (murmur2(typeof key === 'string' ? Buffer.from(key) : key) & 0x7fffffff) % partitions;
}

const SEED = 0x9747b28c;
// Mixing constants of murmur2; 32-bit arithmetic throughout, as Java's int (Math.imul, >>>).
const M = 0x5bd1e995;
const R = 24;

/** Java's org.apache.kafka.common.utils.Utils.murmur2: a signed 32-bit hash of the key's bytes. */
function murmur2(data: Buffer): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length - (length % 4);
  for (let i = 0; i < whole; i += 4) {
    let k = data.readInt32LE(i);
    k = Math.imul(k, M);
    k ^= k >>> R;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rest = length % 4;
  if (rest === 3) h ^= (data[whole + 2] as number) << 16;
  if (rest >= 2) h ^= (data[whole + 1] as number) << 8;
  if (rest >= 1) h = Math.imul(h ^ (data[whole] as number), M);
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}
