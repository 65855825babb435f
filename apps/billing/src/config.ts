import { consumerServiceSchema } from '@outbox/service/config';
import { z } from 'zod';

export const configSchema = consumerServiceSchema({ port: 3004, groupId: 'billing' }).extend({
  /** The simulated payment provider declines authorizations above this amount (minor units). */
  PAYMENT_LIMIT_CENTS: z.coerce.bigint().positive().default(1_000_000n),
  /** Share of provider calls that fail as if it were down (0..1); such events are retried. */
  PAYMENT_FAULT_RATE: z.coerce.number().min(0).max(1).default(0),
  /** Latency added to every provider call, in milliseconds. */
  PAYMENT_LATENCY_MS: z.coerce.number().int().min(0).default(0),
});

export type Config = z.output<typeof configSchema>;
