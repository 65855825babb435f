import { EventFailedError } from '@outbox/inbox';
import { queryRows, type SqlExecutor } from '@outbox/runtime/sql-executor';
import { isCreated, type PaymentEvent } from './authorizePayment.ts';
import type { BoundedMap } from './boundedMap.ts';
import type { PaymentProvider } from './paymentProvider.ts';
import { callProvider } from './providerCalls.ts';

/** ORDER_CANCELLED events whose authorization the provider already voided, by event id. */
export type PreparedVoids = BoundedMap<string, string>;

const heldAuthorizations = `
  select order_id::text, authorization_id from payments
   where order_id = any($1::uuid[]) and status = 'AUTHORIZED' and authorization_id is not null`;

/**
 * The ORDER_CANCELLED events of a chunk, before the transaction: void the authorizations the chunk's cancels release,
 * holding no connection and no lock, a few calls at a time; applyPayments then records them.
 * Voiding is idempotent, so a retry voids again harmlessly. An authorization given in the same
 * chunk (its ORDER_CREATED just before) is not recorded yet: applyPayments voids that one.
 */
export async function prepareVoids(
  db: SqlExecutor,
  events: PaymentEvent[],
  provider: PaymentProvider,
  prepared: PreparedVoids,
): Promise<void> {
  const cancels = events.filter((event) => !isCreated(event));
  if (cancels.length === 0) return;
  const held = new Map(
    (
      await queryRows<{ order_id: string; authorization_id: string }>(db, heldAuthorizations, [
        cancels.map((event) => event.data.orderId),
      ])
    ).map((row) => [row.order_id, row.authorization_id]),
  );
  const failures = await callProvider(events, async (event) => {
    const authorizationId = isCreated(event) ? undefined : held.get(event.data.orderId);
    if (!authorizationId) return;
    await provider.void(authorizationId);
    prepared.set(event.id, authorizationId);
  });
  const [first] = failures;
  if (first) throw new EventFailedError(first.index, first.error);
}
