import { AssignerProtocol, type MemberAssignment, Partitioners } from 'kafkajs';

// The client's types, under the names production code uses: apps and packages import them from
// here, never from the client package (tests/architecture checks it), so the client is swapped here.
export type {
  Admin,
  Consumer,
  EachBatchPayload,
  IHeaders,
  Kafka,
  KafkaMessage,
  Message,
  Producer,
  RetryOptions,
} from 'kafkajs';

/**
 * The Java client's murmur2 partitioner: a key (an aggregate id) lands on the same partition
 * whichever client produces it. Named, not left to kafkajs' default, which also silences kafkajs'
 * "default partitioner changed" warning at every start.
 */
export const javaCompatiblePartitioner = Partitioners.DefaultPartitioner;

/** A consumer group member's assignment (DescribeGroups' bytes): topic → partitions. */
export function decodeMemberAssignment(bytes: Buffer): MemberAssignment | null {
  return AssignerProtocol.MemberAssignment.decode(bytes);
}
