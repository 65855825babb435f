import type { Server } from 'node:http';
import { kafkaSecurity } from '@outbox/runtime/kafka-security';
import type { Logger } from '@outbox/runtime/logger';
import { createConsoleApp } from './app.ts';
import type { Config } from './config.ts';
import { watchDeadLetters } from './deadLetterWatcher.ts';
import type { DemoControls } from './demoControlRoutes.ts';
import { kafkaTopologyReader } from './readModels/kafkaTopology.ts';
import { connectServices } from './services.ts';

export type RunningConsole = { url: string; close(): Promise<void> };

/**
 * Connect to what the console watches, and listen. `main.ts` (docker compose, production) calls it
 * without controls; the local demo (`scripts/demo.ts`) and the tests with them.
 */
export async function startConsole(options: {
  config: Config;
  logger: Logger;
  controls?: DemoControls;
  host?: string;
}): Promise<RunningConsole> {
  const { config, logger } = options;
  const services = connectServices(config, logger);
  const deadLetters = watchDeadLetters({
    brokers: config.KAFKA_BROKERS,
    security: kafkaSecurity(config),
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    logger,
  });
  const kafka = kafkaTopologyReader({
    brokers: config.KAFKA_BROKERS,
    security: kafkaSecurity(config),
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    logger,
  });
  const app = createConsoleApp({
    config,
    services,
    deadLetters,
    kafka,
    logger,
    ...(options.controls ? { controls: options.controls } : {}),
  });
  const host = options.host ?? '127.0.0.1';
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(config.PORT, host, (err?: Error) =>
      err ? reject(err) : resolve(listening),
    );
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deadLetters.stop();
      await kafka.close();
      await Promise.allSettled(services.map((service) => service.pool.end()));
    },
  };
}
