import { hostname } from 'node:os';
import {
  allowFaults,
  kafkaBrokers,
  kafkaClient,
  kafkaTopicSettings,
  logLevel,
  port,
  positiveInt,
  postgresUrl,
  refuseFaultsUnlessAllowed,
  standbySettings,
  timerMs,
  topicPrefix,
} from '@outbox/runtime/config';
import { kafkaSecuritySettings, refineKafkaSecurity } from '@outbox/runtime/kafka-security';
import { z } from 'zod';
import { relayFaultSettings } from './engine/faultPoints.ts';

/**
 * The bound of the mark with the next claim unless RELAY_MARK_WITH_NEXT_CLAIM_MS is set: 100 ms,
 * the value measured (docs/performance.md#the-mark-with-the-next-claim), or a tenth of the lease
 * when that is less (markWithNextClaimMs).
 */
export const MARK_WITH_NEXT_CLAIM_DEFAULT_MS = 100;

/** The bound a relay runs with: the setting, or the default within a tenth of the lease. */
export function markWithNextClaimMs(config: {
  RELAY_MARK_WITH_NEXT_CLAIM_MS?: number | undefined;
  RELAY_LEASE_MS: number;
}): number {
  return (
    config.RELAY_MARK_WITH_NEXT_CLAIM_MS ??
    Math.min(MARK_WITH_NEXT_CLAIM_DEFAULT_MS, Math.floor(config.RELAY_LEASE_MS / 10))
  );
}

const settings = z.object({
  NODE_ENV: z.string().optional(),
  /** Health and metrics endpoint. */
  PORT: port(3002),
  /** The database whose outbox table this relay drains. */
  DATABASE_URL: postgresUrl,
  KAFKA_BROKERS: kafkaBrokers,
  KAFKA_TOPIC_PREFIX: topicPrefix,
  KAFKA_CLIENT: kafkaClient,
  ...kafkaTopicSettings,
  ...kafkaSecuritySettings,
  LOG_LEVEL: logLevel,
  /**
   * Identifies this relay's leases in the outbox table; defaults to host and pid. `{hostname}` in
   * it is replaced by the host name, so the replicas of one compose service (which share their
   * environment) still lease under distinct ids: two relays under one id would fence each other
   * off nothing.
   */
  RELAY_ID: z
    .string()
    .min(1)
    .transform((value) => value.replaceAll('{hostname}', hostname()))
    .optional(),
  /**
   * The largest claim; under a backlog claims grow to it. Draining a backlog, 1,000 kept up with
   * Debezium where 100 did not (docs/performance.md, "The relay beside Debezium").
   */
  RELAY_BATCH_SIZE: positiveInt(1000),
  /** The smallest claim, when the outbox is quiet (claims adapt between the two). */
  RELAY_MIN_BATCH_SIZE: positiveInt(16),
  /**
   * Bounds every database call of the relay: a statement (server side), a query's answer (client
   * side: a black-holed database never answers, so only the client can notice), a connection
   * attempt, an idle transaction. Without them a relay whose database vanished hangs and reports ok.
   */
  RELAY_DB_TIMEOUT_MS: timerMs().default(10_000),
  /** Fallback poll when no NOTIFY arrives (a missed notification never strands an event). */
  RELAY_POLL_INTERVAL_MS: timerMs().default(1000),
  /**
   * How long an idle relay waits after a NOTIFY before it claims, so that the rows committed
   * meanwhile go out as one batch (fewer claims, marks and consumer transactions, at the price of
   * this much latency; docs/performance.md has both sides measured). 0 claims at once; a relay
   * catching up never waits.
   */
  RELAY_LINGER_MS: z.coerce
    .number()
    .int('a whole number of milliseconds')
    .min(0, 'from 0 (claim at once) to 1000 ms')
    .max(1000, 'from 0 (claim at once) to 1000 ms: a longer linger is latency, not batching')
    .default(75),
  /**
   * How long an idle relay keeps the mark of a batch the broker acknowledged for its next claim,
   * so that both go to the database as one statement (fewer statements and round trips per event
   * at low rates; the event is on the broker already, only its published_at waits). Only while
   * batches come at least this close together (relayOptions.ts, marksWithNextClaim); a mark whose
   * wake-up does not come within this is sent alone. 0 marks at once. At most a tenth of
   * RELAY_LEASE_MS (below); unset, 100 ms or a tenth of the lease (markWithNextClaimMs).
   */
  RELAY_MARK_WITH_NEXT_CLAIM_MS: z.coerce
    .number()
    .int('a whole number of milliseconds')
    .min(0, 'from 0 (mark at once) to 1000 ms')
    .max(1000, 'from 0 (mark at once) to 1000 ms')
    .optional(),
  /** How long a claimed row stays leased; a crashed relay's rows become claimable after this. */
  RELAY_LEASE_MS: timerMs().default(30_000),
  /** Attempts before an event that keeps failing is dead-lettered (status failed). */
  RELAY_MAX_ATTEMPTS: positiveInt(10),
  /**
   * Published events are deleted this long after publication (0 keeps them for ever), in both
   * modes: in debezium mode a row is published once the slot confirmed it (cdc/cdcConfirmation.ts).
   */
  RELAY_RETENTION_HOURS: z.coerce.number().min(0).default(24),
  /** How often the retention sweep runs. */
  RELAY_RETENTION_INTERVAL_MS: timerMs().default(60_000),
  /**
   * `polling` (default): this process claims the outbox's rows and publishes them. `debezium`: a
   * Debezium connector on Kafka Connect publishes them from the write-ahead log
   * (docs/design.md#polling-or-cdc), and this process publishes the rows its replication slot
   * cannot stream, marks published the rows the slot confirmed (cdc/cdcConfirmation.ts), and
   * reports the connector and the slot (/healthz, /metrics).
   */
  RELAY_MODE: z.enum(['polling', 'debezium']).default('polling'),
  /**
   * Kafka Connect's REST API (e.g. http://127.0.0.1:8083); debezium mode only. Without credentials:
   * the URL is shown on /healthz and in the logs.
   */
  RELAY_CONNECT_URL: z
    .url()
    .refine((url) => {
      const parsed = new URL(url);
      return parsed.username === '' && parsed.password === '';
    }, 'must hold no user or password (it is shown on /healthz and in the logs): set RELAY_CONNECT_USER and RELAY_CONNECT_PASSWORD')
    .optional(),
  /**
   * HTTP basic authentication for Connect's REST API (BasicAuthSecurityRestExtension,
   * docs/production.md, "The connector's credentials and Connect's REST API"); both or neither.
   */
  RELAY_CONNECT_USER: z.string().min(1).optional(),
  RELAY_CONNECT_PASSWORD: z.string().min(1).optional(),
  /** The connector that publishes this database's outbox; debezium mode only. */
  RELAY_CONNECTOR: z.string().min(1).optional(),
  /**
   * The connector's replication slot (its `slot.name`) in DATABASE_URL's server; debezium mode
   * only. Read from PostgreSQL, not from Connect: while Connect is down the slot still holds WAL.
   */
  RELAY_REPLICATION_SLOT: z
    .string()
    .regex(/^[a-z0-9_]{1,63}$/, 'lowercase letters, digits and underscores, as PostgreSQL names a slot')
    .optional(),
  /**
   * Debezium mode: how often the relay checks the slot's reader and confirmed position, marks the
   * rows it confirmed published, and, when a new reader holds the slot, publishes the rows written
   * before it (cdc/cdcConfirmation.ts).
   */
  RELAY_CDC_CONFIRM_INTERVAL_MS: timerMs().default(1000),
  ...standbySettings,
  /** Bearer token for POST /admin/redrive; without it the admin endpoint does not exist. */
  RELAY_ADMIN_TOKEN: z.string().min(16, 'use at least 16 characters').optional(),
  ...allowFaults,
  ...relayFaultSettings,
});

const withMode = settings.superRefine((config, context) => {
  // The rows stay leased while their mark waits (renewed every third of the lease): a wait near
  // the lease would leave one late renewal between an acknowledged batch and its takeover.
  if ((config.RELAY_MARK_WITH_NEXT_CLAIM_MS ?? 0) * 10 > config.RELAY_LEASE_MS) {
    context.addIssue({
      code: 'custom',
      path: ['RELAY_MARK_WITH_NEXT_CLAIM_MS'],
      message: `at most a tenth of RELAY_LEASE_MS (${config.RELAY_LEASE_MS} ms): lower it, or 0 to mark at once`,
    });
  }
  if (config.RELAY_MODE !== 'debezium') return;
  if (config.DATABASE_WAIT_FOR_STANDBY !== undefined) {
    context.addIssue({
      code: 'custom',
      path: ['DATABASE_WAIT_FOR_STANDBY'],
      message:
        "is the polling relay's: in debezium mode the connector publishes, see docs/production.md#database-failover",
    });
  }
  if ((config.RELAY_CONNECT_USER === undefined) !== (config.RELAY_CONNECT_PASSWORD === undefined)) {
    context.addIssue({
      code: 'custom',
      path: [config.RELAY_CONNECT_USER === undefined ? 'RELAY_CONNECT_USER' : 'RELAY_CONNECT_PASSWORD'],
      message: 'is required with the other of RELAY_CONNECT_USER and RELAY_CONNECT_PASSWORD',
    });
  }
  for (const variable of ['RELAY_CONNECT_URL', 'RELAY_CONNECTOR', 'RELAY_REPLICATION_SLOT'] as const) {
    if (config[variable] === undefined) {
      context.addIssue({ code: 'custom', path: [variable], message: 'is required with RELAY_MODE=debezium' });
    }
  }
});

// A stray fault variable must not be able to take a production relay down.
export const configSchema = refuseFaultsUnlessAllowed(refineKafkaSecurity(withMode), {
  RELAY_FAULT: (config) => config.RELAY_FAULT !== undefined,
});

export type Config = z.output<typeof configSchema>;
