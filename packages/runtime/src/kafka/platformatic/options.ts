import type { BaseOptions, SASLMechanismValue } from '@platformatic/kafka';
import type { KafkaSecurity } from '../../kafkaSecurity.ts';
import type { RetryOptions } from '../clientOptions.ts';
import type { KafkaGroupProtocol } from '../ports.ts';

/** The settings a @platformatic/kafka client is built from: those of KafkaClientOptions it reads. */
export type PlatformaticOptions = {
  clientId: string;
  brokers: string[];
  /** The project's retry settings, mapped to @platformatic/kafka's (retries, retryDelay). */
  retry?: RetryOptions;
  security?: KafkaSecurity;
  /** KAFKA_GROUP_PROTOCOL of the group members built from these options; classic when left out. */
  groupProtocol?: KafkaGroupProtocol;
};

const MECHANISMS: Record<NonNullable<KafkaSecurity['sasl']>['mechanism'], SASLMechanismValue> = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
};

/**
 * The base options of every @platformatic/kafka client: the same brokers, security, connect
 * timeout and retry budget as the kafkajs client (kafkajs/client.ts), so the two are compared on equal
 * terms. Retries back off exponentially from initialRetryTime to maxRetryTime, as kafkajs' do.
 */
export function baseOptions({
  clientId,
  brokers,
  retry = {},
  security = {},
}: PlatformaticOptions): BaseOptions {
  const { retries = 8, initialRetryTime = 300, maxRetryTime = 30_000 } = retry;
  return {
    clientId,
    bootstrapBrokers: brokers,
    connectTimeout: 3000,
    retries,
    retryDelay: (_client, _operation, attempt) =>
      Math.min(maxRetryTime, initialRetryTime * 2 ** (attempt - 1)),
    ...(security.tls ? { tls: security.tls } : {}),
    ...(security.sasl
      ? {
          sasl: {
            mechanism: MECHANISMS[security.sasl.mechanism],
            username: security.sasl.username,
            password: security.sasl.password,
          },
        }
      : {}),
  };
}
