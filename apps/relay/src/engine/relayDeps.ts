import type { StandbyWait } from '@outbox/runtime/standby-wait';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { RelayFaultHooks } from './faultPoints.ts';
import type { RelayMetrics } from './metrics.ts';
import type { OutgoingEvent } from './publisher.ts';
import type { RelayOptions } from './relayOptions.ts';
import type { Wakeup } from './wakeup.ts';

/** Events are the claimed rows' envelopes; the publisher traces each (docs/tracing.md). */
export type Publisher = { publish(events: OutgoingEvent[]): Promise<void> };

/** What a relay loop is given (relay.ts): its pool, its publisher, its wake-ups and its options. */
export type RelayDeps = {
  pool: pg.Pool;
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
