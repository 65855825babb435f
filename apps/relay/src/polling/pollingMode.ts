import { FaultPoints } from '../engine/faultPoints.ts';
import { createRelayMetrics } from '../engine/metrics.ts';
import { Relay } from '../engine/relay.ts';
import { relayLoopOptions, standbyWaitOf } from '../engine/relayParts.ts';
import { Wakeup } from '../engine/wakeup.ts';
import type { RelayModeFactory } from '../relayMode.ts';
import { adminRoutes } from './adminRoutes.ts';
import { NotifyListener } from './notifyListener.ts';

/**
 * The relay in its default mode (RELAY_MODE=polling): the engine's loop (engine/relay.ts) claims,
 * publishes and marks, woken by the outbox trigger's NOTIFY (notifyListener.ts) or its poll
 * interval; with RELAY_ADMIN_TOKEN, the ops server redrives dead letters (adminRoutes.ts).
 */
export const pollingMode: RelayModeFactory = {
  connections: 4,
  create({ config, relayId, logger, pool, store, registry, publisher }) {
    const wakeup = new Wakeup();
    const listener = new NotifyListener(config.DATABASE_URL, wakeup, logger);
    const relay = new Relay({
      store,
      publisher,
      wakeup,
      logger,
      metrics: createRelayMetrics(registry, store, logger),
      options: relayLoopOptions(config, relayId),
      ...standbyWaitOf(config, pool, registry),
      // The chaos suite's kill -9 points, when its config allows RELAY_FAULT; none in production.
      ...(config.RELAY_FAULT ? { faults: new FaultPoints(config.RELAY_FAULT, logger) } : {}),
    });
    return {
      start: async () => {
        await listener
          .listen()
          .catch((err: unknown) => logger.warn({ err }, 'LISTEN failed; polling only until it works'));
        relay.start();
      },
      health: () => ({ mode: 'polling', ...relay.health }),
      stop: async () => {
        await relay.stop();
        await listener.close().catch((err: unknown) => logger.warn({ err }, 'LISTEN connection not closed'));
      },
      ...(config.RELAY_ADMIN_TOKEN ? { routes: adminRoutes(store, config.RELAY_ADMIN_TOKEN, logger) } : {}),
      described: { brokers: config.KAFKA_BROKERS },
    };
  },
};
