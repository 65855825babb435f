import { kafkaBrokers, logLevel, port, positiveInt, postgresUrl, topicPrefix } from '@outbox/service/config';
import { z } from 'zod';

export const configSchema = z.object({
  /** Health and metrics endpoint. */
  PORT: port(3002),
  /** The database whose outbox table this relay drains. */
  DATABASE_URL: postgresUrl,
  KAFKA_BROKERS: kafkaBrokers,
  KAFKA_TOPIC_PREFIX: topicPrefix,
  /** Partitions for topics the relay creates; the Kafka key (aggregate id) picks the partition. */
  KAFKA_TOPIC_PARTITIONS: positiveInt(6),
  LOG_LEVEL: logLevel,
  /** Identifies this relay's leases in the outbox table; defaults to host and pid. */
  RELAY_ID: z.string().min(1).optional(),
  RELAY_BATCH_SIZE: positiveInt(100),
  /** Fallback poll when no NOTIFY arrives (a missed notification never strands an event). */
  RELAY_POLL_INTERVAL_MS: positiveInt(1000),
  /** How long a claimed row stays leased; a crashed relay's rows become claimable after this. */
  RELAY_LEASE_MS: positiveInt(30_000),
});

export type Config = z.output<typeof configSchema>;
