import { createHash } from 'node:crypto';
import type { Tx } from '../db.ts';
import { HttpProblem } from '../http/problem.ts';
import type { OrderRequest } from './orderRequest.ts';

/** The validated request, hashed: key order and whitespace of the raw body do not matter. */
export function requestHash(request: OrderRequest): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

const claimKey = `
  insert into idempotency_keys (key, request_hash, order_id)
  values ($1, $2, $3::uuid)
  on conflict (key) do nothing
  returning key`;

/**
 * Claim an Idempotency-Key for a new order, inside the order's transaction. Returns undefined when
 * the key is new (the caller goes on to create order `orderId`), or the order an earlier request
 * with the same key created. A concurrent duplicate blocks on the key's primary key until the first
 * transaction ends: if it committed, the duplicate gets its order; if it rolled back, the duplicate
 * claims the key itself. Either way exactly one order exists per key.
 */
export async function claimIdempotencyKey(tx: Tx, key: string, hash: string, orderId: string) {
  const claimed = await tx.$queryRawUnsafe<unknown[]>(claimKey, key, hash, orderId);
  if (claimed.length > 0) return undefined;

  const existing = await tx.idempotencyKey.findUniqueOrThrow({
    where: { key },
    include: { order: { include: { items: true } } },
  });
  if (existing.requestHash !== hash) {
    throw new HttpProblem(
      422,
      'urn:problem:idempotency-key-reused',
      'Idempotency-Key reused with a different request',
      `The key ${JSON.stringify(key)} was already used for a different order request; use a new key for a new order.`,
      [{ header: 'Idempotency-Key', detail: 'already used with a different body' }],
    );
  }
  return existing.order;
}
