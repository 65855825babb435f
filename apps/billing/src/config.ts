import { consumerFaultSettings, consumerFaultSwitches } from '@outbox/inbox';
import {
  allowFaults,
  consumerServiceSchema,
  type FaultSwitches,
  refineKafkaGroupProtocol,
  refuseFaultsUnlessAllowed,
  timerMs,
} from '@outbox/runtime/config';
import { databaseTimeoutSettings, refineDatabaseTimeouts } from '@outbox/runtime/database-timeouts';
import { refineKafkaSecurity } from '@outbox/runtime/kafka-security';
import { z } from 'zod';

const settings = consumerServiceSchema({ port: 3004, groupId: 'billing' }).extend({
  ...databaseTimeoutSettings,
  ...allowFaults,
  ...consumerFaultSettings,
  /** The simulated payment provider declines authorizations above this amount (minor units). */
  PAYMENT_LIMIT_CENTS: z.coerce.bigint().positive().default(1_000_000n),
  /** Test and demo switch: share of provider calls that fail as if it were down (0..1); such events are retried. */
  PAYMENT_FAULT_RATE: z.coerce.number().min(0).max(1).default(0),
  /** With a fault rate: the same seed fails the same calls in every run (unset: by chance). */
  PAYMENT_FAULT_SEED: z.string().min(1).optional(),
  /** Test and demo switch: latency added to every provider call, in milliseconds. */
  PAYMENT_LATENCY_MS: timerMs(0).default(0),
  /** A provider call without an answer after this long fails, and the event is retried. */
  PAYMENT_TIMEOUT_MS: timerMs().default(3_000),
  /** Idempotency keys the simulated provider remembers (the oldest are forgotten first). */
  PAYMENT_KEYS_REMEMBERED: z.coerce.number().int().positive().default(100_000),
});

type Settings = z.output<typeof settings>;

/**
 * The simulated provider's faults, like the consumers' kill switches, are for the chaos suite and
 * the demo: refused unless OUTBOX_ALLOW_FAULTS allows them.
 */
const faultSwitches: FaultSwitches<Settings> = {
  ...consumerFaultSwitches,
  PAYMENT_FAULT_RATE: (config) => config.PAYMENT_FAULT_RATE > 0,
  PAYMENT_LATENCY_MS: (config) => config.PAYMENT_LATENCY_MS > 0,
};

// A consumer that does not run the provider call before its transaction makes it inside: the
// call must then fit in the transaction.
export const configSchema = refuseFaultsUnlessAllowed(
  refineKafkaGroupProtocol(refineKafkaSecurity(refineDatabaseTimeouts(settings))).refine(
    (config) => config.PAYMENT_TIMEOUT_MS < config.DATABASE_TRANSACTION_TIMEOUT_MS,
    { path: ['PAYMENT_TIMEOUT_MS'], message: 'must be shorter than DATABASE_TRANSACTION_TIMEOUT_MS' },
  ),
  faultSwitches,
);

export type Config = z.output<typeof configSchema>;
