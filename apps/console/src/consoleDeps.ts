// What the console's app is built from (app.ts), and what its routers read.
import type { Logger } from '@outbox/runtime/logger';
import type { Config } from './config.ts';
import type { DeadLetterWatcher } from './deadLetterWatcher.ts';
import type { DemoControls } from './demoControlRoutes.ts';
import type { KafkaTopologyReader } from './readModels/kafkaTopology.ts';
import type { Service } from './services.ts';

export type ConsoleDeps = {
  config: Config;
  services: Service[];
  deadLetters: DeadLetterWatcher;
  /** The brokers and partition leaders (readModels/kafkaTopology.ts). */
  kafka: KafkaTopologyReader;
  logger: Logger;
  /** The local demo's process controls. Absent everywhere else, and then so are their routes. */
  controls?: DemoControls;
};
