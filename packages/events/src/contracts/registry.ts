import type { z } from 'zod';
import { ORDER_CREATED, orderCreatedV1 } from './orderCreated.ts';

/**
 * Every event type and schema version the system knows, with the schema its data must satisfy.
 * Writers validate before an event enters the outbox; consumers validate after it leaves Kafka.
 */
export const eventSchemas: Record<string, Record<number, z.ZodType>> = {
  [ORDER_CREATED]: { 1: orderCreatedV1 },
};

export function schemaFor(type: string, version: number): z.ZodType | undefined {
  return eventSchemas[type]?.[version];
}
