import { hostname } from 'node:os';
import { loadConfigOrExit } from '@outbox/service/config';
import { createLogger } from '@outbox/service/logger';
import { createMetricsRegistry, startOpsServer } from '@outbox/service/ops-server';
import { onShutdown } from '@outbox/service/shutdown';
import pg from 'pg';
import { configSchema } from './config.ts';
import { KafkaPublisher } from './publisher.ts';
import { Relay } from './relay.ts';
import { Wakeup } from './wakeup.ts';

const config = loadConfigOrExit('relay', configSchema);
const logger = createLogger('relay', config.LOG_LEVEL);
const relayId = config.RELAY_ID ?? `${hostname()}-${process.pid}`;

const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 4 });
const publisher = new KafkaPublisher({
  clientId: `relay-${relayId}`,
  brokers: config.KAFKA_BROKERS,
  topicPrefix: config.KAFKA_TOPIC_PREFIX,
  topicPartitions: config.KAFKA_TOPIC_PARTITIONS,
  logger,
});
const wakeup = new Wakeup(config.DATABASE_URL, logger);
const relay = new Relay(pool, publisher, wakeup, logger, {
  id: relayId,
  batchSize: config.RELAY_BATCH_SIZE,
  leaseMs: config.RELAY_LEASE_MS,
  pollIntervalMs: config.RELAY_POLL_INTERVAL_MS,
});

// Start even while Kafka is away: the relay retries in its loop, and says so on /healthz.
await publisher
  .connect()
  .catch((err: unknown) => logger.warn({ err }, 'Kafka not reachable yet; will retry'));
await wakeup.listen();
relay.start();

const server = await startOpsServer({
  port: config.PORT,
  registry: createMetricsRegistry('relay'),
  health: () => ({ relayId, ...relay.health }),
});
logger.info({ relayId, port: config.PORT, brokers: config.KAFKA_BROKERS }, 'relay started');

onShutdown(logger, async () => {
  await relay.stop();
  server.close();
  await Promise.allSettled([wakeup.close(), publisher.disconnect(), pool.end()]);
});
