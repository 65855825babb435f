import { Kafka, type LogEntry, logLevel, type RetryOptions, type SASLOptions } from 'kafkajs';
import type { Logger } from 'pino';
import type { KafkaSecurity } from '../kafkaSecurity.ts';
import { kafkajsClient } from './kafkajsAdmin.ts';
import { platformaticClient } from './platformatic/client.ts';
import type { KafkaClient, KafkaClientName, KafkaGroupProtocol } from './ports.ts';
import { fixKafkajsIdleTimerLoop } from './requestQueueFix.ts';

export type KafkaClientOptions = {
  clientId: string;
  brokers: string[];
  /** kafkajs logs go through the service's logger, so every line has the same shape. */
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

const SASL_REFUSED =
  'Kafka refused the SASL credentials: check KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD';

const levels: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/**
 * The project's one place that constructs a kafkajs client. kafkajs is unmaintained; keeping its
 * construction here (and the client behind small interfaces elsewhere) keeps a switch small.
 */
export function createKafka({
  clientId,
  brokers,
  logger,
  retry,
  security = {},
  requestTimeoutMs,
}: KafkaClientOptions): Kafka {
  fixKafkajsIdleTimerLoop();
  const kafkaLogger = logger.child({ component: 'kafkajs' });
  return new Kafka({
    clientId,
    brokers,
    ...(security.tls ? { ssl: security.tls } : {}),
    ...(security.sasl ? { sasl: security.sasl as SASLOptions } : {}),
    connectionTimeout: 3000,
    ...(requestTimeoutMs ? { requestTimeout: requestTimeoutMs } : {}),
    retry: retry ?? { initialRetryTime: 300, retries: 8 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log }: LogEntry) => {
        const { message, ...extra } = log;
        // Said at every start by every idempotent producer with bounded retries. Ours are bounded on
        // purpose, and a failed send gets a new producer (apps/relay/src/polling/publisher.ts), so nobody can act on it.
        if (message === 'Limiting retries for the idempotent producer may invalidate EoS guarantees') return;
        // kafkajs says only that authentication failed; the reader needs to know what to fix.
        if (/SASL \S+ authentication failed/.test(message)) {
          kafkaLogger.error({ ...extra, error: message }, SASL_REFUSED);
          return;
        }
        kafkaLogger[levels[level] ?? 'info'](extra, message);
      },
  });
}

/**
 * The services' producers, group members and admin calls through the client KAFKA_CLIENT names
 * (config.ts): kafkajs or @platformatic/kafka, compared under the same failovers in
 * docs/dependencies.md.
 */
export function createKafkaClient(
  options: KafkaClientOptions & { client?: KafkaClientName; groupProtocol?: KafkaGroupProtocol },
): KafkaClient {
  if (options.client === 'platformatic') return platformaticClient(options);
  // The services' config refuses this first (refineKafkaGroupProtocol); a caller that skips it is told here.
  if (options.groupProtocol === 'consumer') {
    throw new Error('the consumer group protocol needs the platformatic client: kafkajs speaks only classic');
  }
  return kafkajsClient(createKafka(options));
}
