import { Kafka, type LogEntry, logLevel, type SASLOptions } from 'kafkajs';
import type { KafkaClientOptions } from '../clientOptions.ts';
import type { KafkaClient, KafkaGroupProtocol } from '../ports.ts';
import { KafkajsAdmin } from './admin.ts';
import { kafkajsGroupMember } from './groupConsumer.ts';
import { AcknowledgedProducer } from './producer.ts';
import { fixKafkajsIdleTimerLoop } from './requestQueueFix.ts';

const SASL_REFUSED =
  'Kafka refused the SASL credentials: check KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD';

const levels: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/**
 * The project's one place that constructs a kafkajs client. kafkajs is unmaintained; keeping it in
 * this folder, behind the project's ports (ports.ts), keeps a switch small.
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
        // purpose, and a failed send gets a new producer (producer.ts), so nobody can act on it.
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

/** A kafkajs client (createKafka) as the project's KafkaClient: the acknowledged producer, the admin calls, the group member. */
export function kafkajsClient(kafka: Kafka): KafkaClient {
  return {
    name: 'kafkajs',
    producer: (options) => new AcknowledgedProducer(kafka, options),
    admin: () => new KafkajsAdmin(kafka.admin()),
    groupMember: (options) => kafkajsGroupMember(kafka, options),
  };
}

/** The client KAFKA_CLIENT=kafkajs names (client.ts chooses it). */
export function kafkajs(options: KafkaClientOptions & { groupProtocol?: KafkaGroupProtocol }): KafkaClient {
  // The services' config refuses this first (refineKafkaGroupProtocol); a caller that skips it is told here.
  if (options.groupProtocol === 'consumer') {
    throw new Error('the consumer group protocol needs the platformatic client: kafkajs speaks only classic');
  }
  return kafkajsClient(createKafka(options));
}
