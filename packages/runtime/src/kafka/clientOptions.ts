import type { Logger } from 'pino';
import type { KafkaSecurity } from '../kafkaSecurity.ts';

/**
 * How long a client retries a connection or request before the operation fails: `retries` more
 * attempts, waiting from `initialRetryTime` up to `maxRetryTime` ms between them, doubling.
 */
export type RetryOptions = { retries?: number; initialRetryTime?: number; maxRetryTime?: number };

/**
 * A consumer group's retry settings (for the group member and its client): backoff capped at 2 s
 * instead of kafkajs's 30 s, so a consumer retrying through a broker's death (finding the new
 * coordinator, rejoining, restarting after a crash) tries again within 2 s of the cluster being
 * whole, not up to 30 s later. See docs/local-kafka.md, "When the group coordinator dies".
 */
export const CONSUMER_RETRY: RetryOptions = { initialRetryTime: 300, maxRetryTime: 2000, retries: 10 };

export type KafkaClientOptions = {
  clientId: string;
  brokers: string[];
  /** The client's logs go through the service's logger, so every line has the same shape. */
  logger: Logger;
  /** How long to keep retrying a connection or request before an operation fails. */
  retry?: RetryOptions;
  /** TLS and SASL, from the KAFKA_SSL and KAFKA_SASL_* settings (kafkaSecurity); PLAINTEXT without. */
  security?: KafkaSecurity;
  /**
   * How long a request waits for its answer (kafkajs's default: 30 s). A frozen broker keeps its
   * connections open and answers nothing: each request to it waits this long before the client
   * retries elsewhere. Fetches and joins keep their own longer bounds.
   */
  requestTimeoutMs?: number;
};
