import { Kafka, logLevel } from 'kafkajs';

/**
 * The project's one place that constructs a kafkajs client. kafkajs is unmaintained; keeping its
 * construction (and the producer/consumer settings below) here keeps a switch to another client small.
 */
export function createKafka(clientId: string, brokers: string[]): Kafka {
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    connectionTimeout: 3000,
    retry: { initialRetryTime: 300, retries: 8 },
  });
}
