import { createOutboxStore } from '@outbox/outbox';
import { readAutovacuumWarning } from '@outbox/runtime/database';
import { createMetricsRegistry, startOpsServer } from '@outbox/runtime/ops-server';
import { onShutdown } from '@outbox/runtime/shutdown';
import { shutdownTracing } from '@outbox/runtime/tracing';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { kafkaPublisher, outboxPool, startOutboxRetention } from './engine/relayParts.ts';
import type { RelayModeFactory } from './relayMode.ts';

/**
 * The relay process around its mode, the same whichever mode runs (relayMode.ts): the pool on the
 * outbox's database and the outbox store on it, the metrics registry, the Kafka publisher, the retention, the ops server
 * (/healthz, /metrics) with its warnings, and the graceful shutdown on SIGTERM or SIGINT, which
 * stops the mode, closes what it used and flushes the traces last.
 */
export async function runRelay(
  config: Config,
  relayId: string,
  logger: Logger,
  factory: RelayModeFactory,
): Promise<void> {
  const pool = outboxPool(config, logger, factory.connections);
  const store = createOutboxStore(pool);
  const registry = createMetricsRegistry('relay');
  const publisher = kafkaPublisher(config, relayId, logger);
  const mode = factory.create({ config, relayId, logger, pool, store, registry, publisher });
  // Start even while Kafka is away: the relay retries, and says so on /healthz.
  await publisher
    .connect()
    .catch((err: unknown) => logger.warn({ err }, 'Kafka not reachable yet; will retry'));
  await mode.start();
  // In both modes a row is marked published before the retention may delete it.
  const retention = startOutboxRetention(config, store, logger);
  // A warning on /healthz, not a failure: the retention's deletes leave dead rows for vacuum.
  const autovacuum = await readAutovacuumWarning(pool);
  const server = await startOpsServer({
    port: config.PORT,
    registry,
    health: async () => ({
      relayId,
      kafkaClient: publisher.kafkaClient,
      ...(await mode.health()),
      ...(autovacuum ? { warnings: [autovacuum] } : {}),
    }),
    onError: (err, path) => logger.error({ err, path }, 'ops endpoint failed'),
    ...(mode.routes ? { routes: mode.routes } : {}),
  });
  logger.info({ relayId, mode: config.RELAY_MODE, port: config.PORT, ...mode.described }, 'relay started');

  onShutdown(logger, async () => {
    // Stop the mode first, the batch in hand finished; only then close what it needs.
    await mode.stop();
    retention.stop();
    server.close();
    await Promise.allSettled([publisher.disconnect(), pool.end()]);
    await shutdownTracing(); // last: export the spans of the shutdown too
  });
}
