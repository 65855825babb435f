import type { KafkaClientOptions } from './clientOptions.ts';
import { kafkajs } from './kafkajs/client.ts';
import { platformaticClient } from './platformatic/client.ts';
import type { KafkaClient, KafkaClientName, KafkaGroupProtocol } from './ports.ts';

type ChosenClientOptions = KafkaClientOptions & {
  client?: KafkaClientName;
  groupProtocol?: KafkaGroupProtocol;
};

/**
 * Each client by the name KAFKA_CLIENT gives it. Each lives in its own folder behind the ports
 * (ports.ts), and this is the one place that names them: a client goes with its folder and its line.
 */
const CLIENTS: Record<KafkaClientName, (options: ChosenClientOptions) => KafkaClient> = {
  kafkajs,
  platformatic: platformaticClient,
};

/** The client a process uses when KAFKA_CLIENT is not set (config.ts defaults to it too). */
const DEFAULT_CLIENT: KafkaClientName = 'kafkajs';

/**
 * The services' producers, group members and admin calls through the client KAFKA_CLIENT names
 * (config.ts): kafkajs (the default) or @platformatic/kafka, compared under the same failovers in
 * docs/dependencies.md.
 */
export function createKafkaClient(options: ChosenClientOptions): KafkaClient {
  return CLIENTS[options.client ?? DEFAULT_CLIENT](options);
}
