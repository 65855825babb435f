import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OutboxStore } from '@outbox/outbox';
import type { Health, MetricsRegistry } from '@outbox/runtime/ops-server';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { KafkaPublisher } from './engine/publisher.ts';

/**
 * The contract between the relay process and its two modes, each a driver of the relay engine
 * (engine/): polling (polling/, RELAY_MODE=polling) and change data capture (cdc/,
 * RELAY_MODE=debezium). The process shell (processShell.ts) builds what every mode needs once,
 * gives it to the mode the config names, and starts, asks and stops that mode through these three
 * calls alone.
 */

/**
 * What the shell builds once and gives the mode: the outbox's pool and its store (every read and
 * write of the outbox's rows goes through the store; the pool also carries LISTEN, the standby
 * wait and the slot's health), /metrics, the Kafka publisher.
 */
export type RelayShell = {
  config: Config;
  relayId: string;
  logger: Logger;
  pool: pg.Pool;
  store: OutboxStore;
  registry: MetricsRegistry;
  publisher: KafkaPublisher;
};

/** A mode built on the shell. */
export type RelayMode = {
  /** Starts its work; the publisher has tried to connect by then (and retries if Kafka is away). */
  start(): Promise<void>;
  /** What /healthz says of it; the shell adds the relay's id, its Kafka client and the warnings. */
  health(): Health | Promise<Health>;
  /** Stops its work, the batch in hand finished; the shell closes the publisher and the pool after. */
  stop(): Promise<void>;
  /** Endpoints of its own on the ops server (the polling mode's redrive); false when not its own. */
  routes?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  /** What the start-up log line says of it. */
  described: Record<string, unknown>;
};

/** A mode as main.ts picks it: the connections its pool needs, and how it is built on the shell. */
export type RelayModeFactory = {
  connections: number;
  create(shell: RelayShell): RelayMode;
};
