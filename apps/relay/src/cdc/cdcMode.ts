import { createMetricsRegistry } from '@outbox/runtime/ops-server';
import type { Config } from '../config.ts';
import { createRelayMetrics } from '../engine/metrics.ts';
import { Relay } from '../engine/relay.ts';
import { relayLoopOptions } from '../engine/relayParts.ts';
import { Wakeup } from '../engine/wakeup.ts';
import type { RelayModeFactory, RelayShell } from '../relayMode.ts';
import { startCdcConfirmation } from './cdcConfirmation.ts';
import { basicAuthorization, type ConnectEndpoint, cdcRelayHealth } from './cdcHealth.ts';
import { createCdcMetrics } from './cdcMetrics.ts';

/**
 * The relay in debezium mode (RELAY_MODE=debezium, docs/design.md#polling-or-cdc): a Debezium
 * connector on Kafka Connect publishes the outbox from the WAL. This process stays the service's
 * relay: it publishes, with the engine's claim, publish and mark (engine/relay.ts), the rows the
 * connector's slot cannot stream (written before the slot existed), and marks rows published once
 * the slot has confirmed them (cdcConfirmation.ts), so that retention deletes only published rows
 * as in polling mode; on /healthz and /metrics it says how the connector is doing (Connect's REST
 * API, `GET /connectors/<name>/status`) and what its replication slot holds (pg_replication_slots).
 */
export const cdcMode: RelayModeFactory = {
  connections: 3,
  create(shell) {
    const { config, logger, pool, store, registry } = shell;
    const connect = connectEndpoint(config);
    // The config guarantees these three in this mode.
    const settings = {
      connect,
      connector: config.RELAY_CONNECTOR ?? '',
      slot: config.RELAY_REPLICATION_SLOT ?? '',
    };
    const health = () => cdcRelayHealth(pool, settings);
    const metrics = createCdcMetrics(registry, health, store);
    const drainer = createDrainer(shell);
    let confirmation: { stop(): Promise<void> } | undefined;
    return {
      start: async () => {
        confirmation = startCdcConfirmation({
          store,
          relay: drainer,
          slot: settings.slot,
          intervalMs: config.RELAY_CDC_CONFIRM_INTERVAL_MS,
          pollIntervalMs: config.RELAY_POLL_INTERVAL_MS,
          logger,
          onMarked: (count) => metrics.confirmed.inc(count),
          onDrained: (count) => metrics.drained.inc(count),
        });
      },
      health,
      stop: async () => {
        await confirmation?.stop();
      },
      described: { connectUrl: connect.url, connector: settings.connector, slot: settings.slot },
    };
  },
};

/** Connect's REST API: its URL (which holds no credentials, the config makes sure) and basic authentication. */
function connectEndpoint(config: Config): ConnectEndpoint {
  const { RELAY_CONNECT_USER: user, RELAY_CONNECT_PASSWORD: password } = config;
  return {
    url: config.RELAY_CONNECT_URL ?? '',
    ...(user && password ? { authorization: basicAuthorization(user, password) } : {}),
  };
}

/**
 * The drain's relay: the engine's claim, publish and mark, never started as a loop but stepped by
 * drainUpTo, and woken by nothing (no LISTEN). Its metrics stay off /metrics: the polling relay's
 * backlog alerts would read the rows waiting for the slot's confirmation as stuck
 * (docs/design.md#polling-or-cdc).
 */
function createDrainer({ config, relayId, logger, store, publisher }: RelayShell): Relay {
  return new Relay({
    store,
    publisher,
    wakeup: new Wakeup(),
    logger,
    metrics: createRelayMetrics(createMetricsRegistry('relay-drain'), store, logger),
    // Stepped, not looped: every claim asks for a whole batch, and nothing lingers.
    options: {
      ...relayLoopOptions(config, `${relayId}-drain`),
      minBatchSize: config.RELAY_BATCH_SIZE,
      lingerMs: 0,
    },
  });
}
