import { type EventEnvelope, fromKafkaMessage, schemaFor } from '@outbox/contracts';
import type { ConsumedMessage } from '@outbox/runtime/kafka';

// What the Kafka loop and the chunk step share: a chunk is consecutive messages of one partition,
// decoded; the step applies it in one transaction and says what became of each event.

/** A readable message of a chunk: the event, and where it came from. */
export type ChunkItem = { topic: string; partition: number; message: ConsumedMessage; event: EventEnvelope };

/** What became of one event of a committed chunk. */
export type ChunkResult = 'applied' | 'duplicate' | 'ignored';

/**
 * Apply a chunk of events from one partition, in offset order, and say what became of each.
 * Throws `EventFailedError` (which event) or any error (the whole chunk); nothing may be kept
 * when it throws, i.e. one transaction.
 */
export type ChunkHandler = (items: ChunkItem[]) => Promise<ChunkResult[]>;

/** A message that cannot be read as an event we know, and why: it goes to the dead-letter topic. */
export type Unreadable = { message: ConsumedMessage; reason: string };

/**
 * The event with its data parsed by the schema of its type and version; throws when there is
 * none or the data does not match. What every handler is given, so a handler typed by its event's
 * data (EventData) can rely on that type.
 */
export function checkEventData(event: EventEnvelope): EventEnvelope {
  const schema = schemaFor(event.type, event.schemaversion);
  if (!schema) throw new Error(`unknown event type or version: ${event.type} v${event.schemaversion}`);
  const parsed = schema.safeParse(event.data);
  if (!parsed.success)
    throw new Error(`invalid ${event.type} v${event.schemaversion}: ${parsed.error.message}`);
  return { ...event, data: parsed.data };
}

/**
 * Decode a partition's messages: the readable ones as events whose data passed their contract,
 * the others (not a CloudEvent, unknown type or version, invalid data) with the reason. An
 * unreadable message fails the same way on every delivery, so it is never retried.
 */
export function decodeChunk(
  topic: string,
  partition: number,
  messages: ConsumedMessage[],
): { items: ChunkItem[]; unreadable: Unreadable[] } {
  const items: ChunkItem[] = [];
  const unreadable: Unreadable[] = [];
  for (const message of messages) {
    try {
      items.push({ topic, partition, message, event: checkEventData(fromKafkaMessage(message)) });
    } catch (err) {
      unreadable.push({ message, reason: (err as Error).message });
    }
  }
  return { items, unreadable };
}
