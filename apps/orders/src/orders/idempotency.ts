import { createHash } from 'node:crypto';
import type { Tx } from '../db.ts';
import type { CreatedOrder, KeyClaim } from './createOrder.ts';
import type { OrderRequest } from './orderRequest.ts';

/** The validated request, hashed: key order and whitespace of the raw body do not matter. */
export function requestHash(request: OrderRequest): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

/** What an Idempotency-Key an earlier request claimed answers: its order, or that the body differs. */
export type EarlierRequest = { kind: 'replayed'; order: CreatedOrder } | { kind: 'key-reused' };

/**
 * The answer an earlier request with the same key gets repeated, or undefined when no committed
 * request holds the key. Only on the rare paths: the write statement claims a new key itself
 * (createOrder.ts), and a duplicate that waited there for the first request's commit sees its
 * row here, since this is a later statement with a newer snapshot.
 */
export async function earlierRequest(tx: Tx, claim: KeyClaim): Promise<EarlierRequest | undefined> {
  const existing = await tx.idempotencyKey.findUnique({
    where: { key: claim.key },
    include: { order: { include: { items: true } } },
  });
  if (!existing) return undefined;
  if (existing.requestHash !== claim.requestHash) return { kind: 'key-reused' };
  return { kind: 'replayed', order: existing.order };
}
