import { OUTBOX_SESSION_OPTIONS, type OutboxStore } from '@outbox/outbox';
import { replicationWarning, topicLayout } from '@outbox/runtime/config';
import { kafkaSecurity } from '@outbox/runtime/kafka-security';
import type { MetricsRegistry } from '@outbox/runtime/ops-server';
import { StandbyWait } from '@outbox/runtime/standby-wait';
import pg from 'pg';
import type { Logger } from 'pino';
import { type Config, markWithNextClaimMs } from '../config.ts';
import { KafkaPublisher } from './publisher.ts';
import type { RelayOptions } from './relayOptions.ts';
import { startRetention } from './retention.ts';

/**
 * The parts a relay is built from, each from the validated config: its pool on the outbox's
 * database, its Kafka publisher, the loop's options, the retention and, when configured, the
 * standby wait. The process shell (processShell.ts) builds the pool, the publisher and the
 * retention here, once for either mode; each mode builds its relay's options here.
 */

export function outboxPool(config: Config, logger: Logger, max: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: config.DATABASE_URL,
    max,
    connectionTimeoutMillis: Math.min(5_000, config.RELAY_DB_TIMEOUT_MS),
    statement_timeout: config.RELAY_DB_TIMEOUT_MS,
    query_timeout: config.RELAY_DB_TIMEOUT_MS + 1_000, // after the server's own timeout had its chance
    idle_in_transaction_session_timeout: config.RELAY_DB_TIMEOUT_MS,
    keepAlive: true,
    // Custom plans for its named statements, and the claim on its index in order (claimSql.ts).
    options: OUTBOX_SESSION_OPTIONS,
  });
  // An idle pool connection that the server dropped (restart) must not crash the process.
  pool.on('error', (err) => logger.warn({ err }, 'idle database connection lost'));
  return pool;
}

/** The relay's publisher; says at start-up when the topics it creates would have one replica on a cluster. */
export function kafkaPublisher(config: Config, relayId: string, logger: Logger): KafkaPublisher {
  const warning = replicationWarning(config);
  if (warning) logger.warn(warning);
  return new KafkaPublisher({
    clientId: `relay-${relayId}`,
    client: config.KAFKA_CLIENT,
    brokers: config.KAFKA_BROKERS,
    security: kafkaSecurity(config),
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    topicLayout: topicLayout(config),
    logger,
  });
}

export function relayLoopOptions(config: Config, id: string): RelayOptions {
  return {
    id,
    batchSize: config.RELAY_BATCH_SIZE,
    minBatchSize: Math.min(config.RELAY_MIN_BATCH_SIZE, config.RELAY_BATCH_SIZE),
    leaseMs: config.RELAY_LEASE_MS,
    pollIntervalMs: config.RELAY_POLL_INTERVAL_MS,
    lingerMs: config.RELAY_LINGER_MS,
    markWithNextClaimMs: markWithNextClaimMs(config),
    maxAttempts: config.RELAY_MAX_ATTEMPTS,
  };
}

/** Publish only what the standby holds (docs/production.md#database-failover), when configured. */
export function standbyWaitOf(
  config: Config,
  pool: pg.Pool,
  registry: MetricsRegistry,
): { standbyWait?: StandbyWait } {
  if (!config.DATABASE_WAIT_FOR_STANDBY) return {};
  return {
    standbyWait: new StandbyWait({
      pool,
      standby: config.DATABASE_WAIT_FOR_STANDBY,
      timeoutMs: config.DATABASE_STANDBY_WAIT_MS,
      registry,
    }),
  };
}

/** Deletes published rows older than RELAY_RETENTION_HOURS, in both modes (retention.ts). */
export function startOutboxRetention(config: Config, store: OutboxStore, logger: Logger): { stop(): void } {
  return startRetention(store, logger, config.RELAY_RETENTION_HOURS, config.RELAY_RETENTION_INTERVAL_MS);
}
