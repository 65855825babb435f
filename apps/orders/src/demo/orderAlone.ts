import type { Tx } from '../db.ts';
import {
  type CreatedOrder,
  type KeyClaim,
  ORDER_CTES,
  type OutcomeRow,
  orderParameters,
  WRITE_OUTCOME,
  type WriteOutcome,
  writeOutcome,
} from '../orders/createOrder.ts';

/**
 * The naive write modes' order statement: production's (createOrder.ts) without its outbox row,
 * because these modes send ORDER_CREATED to Kafka themselves, where no transaction covers it.
 */
const insertOrderAndItems = `${ORDER_CTES}\n${WRITE_OUTCOME}`;

/** writeOrder's `insert` for the naive modes: the order, its items and the key claim; no event. */
export async function insertOrderAlone(
  tx: Tx,
  order: CreatedOrder,
  _event: unknown,
  claim: KeyClaim | undefined,
): Promise<WriteOutcome> {
  const rows = await tx.$queryRawUnsafe<OutcomeRow[]>(insertOrderAndItems, ...orderParameters(order, claim));
  return writeOutcome(rows, order);
}
