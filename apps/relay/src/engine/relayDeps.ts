import type { OutboxStore } from '@outbox/outbox';
import type { StandbyWait } from '@outbox/runtime/standby-wait';
import type { Logger } from 'pino';
import type { RelayFaultHooks } from './faultPoints.ts';
import type { RelayMetrics } from './metrics.ts';
import type { Publisher } from './publisher.ts';
import type { RelayOptions } from './relayOptions.ts';
import type { Wakeup } from './wakeup.ts';

/**
 * What a relay loop is given (relay.ts): its two ports, the outbox store (every read and write of
 * the outbox's rows, packages/outbox's outboxStore.ts) and the publisher; its wake-ups, its
 * options, and what it reports to. The relay wraps the ports once with its step timings and, when
 * given, the fault points (metrics.ts, faultPoints.ts): the loop itself calls neither.
 */
export type RelayDeps = {
  store: OutboxStore;
  publisher: Publisher;
  wakeup: Wakeup;
  logger: Logger;
  metrics: RelayMetrics;
  options: RelayOptions;
  /** Test-only fault points (faultPoints.ts); none in production. */
  faults?: RelayFaultHooks;
  /** Publish only rows the database's standby holds (DATABASE_WAIT_FOR_STANDBY, runtime's standbyWait.ts). */
  standbyWait?: StandbyWait;
};
