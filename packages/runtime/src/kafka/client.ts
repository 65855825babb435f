import type { KafkaClientOptions } from './clientOptions.ts';
import { kafkajs } from './kafkajs/client.ts';
import { platformaticClient } from './platformatic/client.ts';
import type { KafkaClient, KafkaClientName, KafkaGroupProtocol } from './ports.ts';

/**
 * The services' producers, group members and admin calls through the client KAFKA_CLIENT names
 * (config.ts): kafkajs (the default) or @platformatic/kafka, compared under the same failovers in
 * docs/dependencies.md. Each lives in its own folder, behind the ports (ports.ts); this is the one
 * place that names them.
 */
export function createKafkaClient(
  options: KafkaClientOptions & { client?: KafkaClientName; groupProtocol?: KafkaGroupProtocol },
): KafkaClient {
  if (options.client === 'platformatic') return platformaticClient(options);
  return kafkajs(options);
}
