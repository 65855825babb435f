/**
 * What a failed publish means for the events in it. The relay treats the three differently:
 *
 * - `unavailable`: the broker could not be reached or is electing leaders. Nothing is wrong with
 *   the events; the whole batch goes back without using up an attempt, and the relay backs off.
 * - `permanent`: the broker refused the event itself and always will (e.g. larger than its
 *   max message size). Dead-lettered at once: retrying cannot help.
 * - `transient`: anything else. Retried with backoff; dead-lettered after the maximum attempts.
 */
export type PublishFailureKind = 'unavailable' | 'permanent' | 'transient';

/** Kafka protocol errors that no retry can fix (the protocol's names, as both clients report them). */
const PERMANENT_TYPES = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'CORRUPT_MESSAGE',
  'INVALID_TOPIC_EXCEPTION',
  'TOPIC_AUTHORIZATION_FAILED',
]);

/** kafkajs error classes that mean "cannot talk to the broker right now". */
const UNAVAILABLE_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTopicMetadataNotLoaded',
  'KafkaJSLockTimeout',
]);

type KafkaErrorShape = {
  name?: string;
  type?: string;
  retriable?: boolean;
  /** The seam's KafkaSendError: no broker reachable, or a leader moving. */
  unavailable?: boolean;
  cause?: unknown;
  originalError?: unknown;
};

export function classifyPublishError(error: unknown): PublishFailureKind {
  // kafkajs wraps the error of the last retry (KafkaJSNumberOfRetriesExceeded → originalError).
  for (let current = error as KafkaErrorShape | undefined, depth = 0; current && depth < 5; depth++) {
    if (current.type && PERMANENT_TYPES.has(current.type)) return 'permanent';
    if (current.name && UNAVAILABLE_NAMES.has(current.name)) return 'unavailable';
    if (current.unavailable === true) return 'unavailable';
    if (current.name === 'KafkaJSProtocolError' && current.retriable) return 'unavailable';
    current = (current.originalError ?? current.cause) as KafkaErrorShape | undefined;
  }
  return 'transient';
}
