import { z } from 'zod';

// The contracts are as strict as the columns the events end up in (the services' migrations):
// an event that passes its schema can always be stored, so a consumer's handler never fails on
// data for ever. What a schema cannot say stays the database's job, and the consumer
// dead-letters such an event on its data or constraint error (inbox/failure.ts).

/** Minor units as a decimal string, > 0 and within `bigint` (at most 18 digits < 2^63). */
export const positiveCents = z.string().regex(/^[1-9]\d{0,17}$/, 'a positive integer of at most 18 digits');

/** A line quantity: `integer not null check (quantity > 0)`. */
export const quantity = z.number().int().positive().max(2_147_483_647);

/** A SKU: `text`, and Kafka keys and logs stay readable. */
export const sku = z.string().min(1).max(200);

/**
 * An order id: a UUID, lower-cased. PostgreSQL compares uuids whatever their case and prints
 * them lower-case, but the handlers keep order ids in maps and sets keyed by what the database
 * printed: an id spelled in upper case would miss its own row there. Every event
 * schema and the event factories (the Kafka key) read order ids through this one definition.
 */
export const orderId = z.uuid().toLowerCase();
