import { readAutovacuumWarning } from '@outbox/runtime/database';
import { createMetricsRegistry, startOpsServer } from '@outbox/runtime/ops-server';
import { onShutdown } from '@outbox/runtime/shutdown';
import { shutdownTracing } from '@outbox/runtime/tracing';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { FaultPoints } from '../engine/faultPoints.ts';
import { createRelayMetrics } from '../engine/metrics.ts';
import { Relay } from '../engine/relay.ts';
import {
  kafkaPublisher,
  outboxPool,
  relayLoopOptions,
  standbyWaitOf,
  startOutboxRetention,
} from '../engine/relayParts.ts';
import { Wakeup } from '../engine/wakeup.ts';
import { adminRoutes } from './adminRoutes.ts';

/** The relay in its default mode (RELAY_MODE=polling): claim, publish, mark (relay.ts). */
export async function startPollingRelay(config: Config, relayId: string, logger: Logger): Promise<void> {
  const pool = outboxPool(config, logger, 4);
  const registry = createMetricsRegistry('relay');
  const publisher = kafkaPublisher(config, relayId, logger);
  const wakeup = new Wakeup(config.DATABASE_URL, logger);
  const relay = new Relay({
    pool,
    publisher,
    wakeup,
    logger,
    metrics: createRelayMetrics(registry, pool, logger),
    options: relayLoopOptions(config, relayId),
    ...standbyWaitOf(config, pool, registry),
    // The chaos suite's kill -9 points, when its config allows RELAY_FAULT; none in production.
    ...(config.RELAY_FAULT ? { faults: new FaultPoints(config.RELAY_FAULT, logger) } : {}),
  });

  // Start even while Kafka is away: the relay retries in its loop, and says so on /healthz.
  await publisher
    .connect()
    .catch((err: unknown) => logger.warn({ err }, 'Kafka not reachable yet; will retry'));
  await wakeup
    .listen()
    .catch((err: unknown) => logger.warn({ err }, 'LISTEN failed; polling only until it works'));
  relay.start();
  const retention = startOutboxRetention(config, pool, logger);

  // A warning on /healthz, not a failure.
  const autovacuum = await readAutovacuumWarning(pool);
  const server = await startOpsServer({
    port: config.PORT,
    registry,
    health: () => ({
      relayId,
      mode: 'polling',
      kafkaClient: publisher.kafkaClient,
      ...relay.health,
      ...(autovacuum ? { warnings: [autovacuum] } : {}),
    }),
    onError: (err, path) => logger.error({ err, path }, 'ops endpoint failed'),
    ...(config.RELAY_ADMIN_TOKEN ? { routes: adminRoutes(pool, config.RELAY_ADMIN_TOKEN, logger) } : {}),
  });
  logger.info({ relayId, port: config.PORT, brokers: config.KAFKA_BROKERS }, 'relay started');

  onShutdown(logger, async () => {
    // Stop claiming and finish the batch in hand first; only then close what it needs.
    await relay.stop();
    retention.stop();
    server.close();
    await Promise.allSettled([wakeup.close(), publisher.disconnect(), pool.end()]);
    await shutdownTracing(); // last: export the spans of the shutdown too
  });
}
