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
  /** Attempts before an event that keeps failing is dead-lettered (status failed). */
  RELAY_MAX_ATTEMPTS: positiveInt(10),
  /** Published events are deleted this long after publication (0 keeps them for ever). */
  RELAY_RETENTION_HOURS: z.coerce.number().min(0).default(24),
  /** Bearer token for POST /admin/redrive; without it the admin endpoint does not exist. */
  RELAY_ADMIN_TOKEN: z.string().min(16, 'use at least 16 characters').optional(),
});

export type Config = z.output<typeof configSchema>;
