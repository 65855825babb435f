import { acknowledgedOrdersCommitted } from './acknowledgedOrdersCommitted.ts';
import { appliedExactlyOnce } from './appliedExactlyOnce.ts';
import { deadLettersAccounted } from './deadLettersAccounted.ts';
import { duplicatesReconcile } from './duplicatesReconcile.ts';
import { everyEventPublished } from './everyEventPublished.ts';
import { failoverAnnouncesNoLostOrder } from './failoverAnnouncesNoLostOrder.ts';
import { noGhostEvents } from './noGhostEvents.ts';
import { noLostOrGhostOrders } from './noLostOrGhostOrders.ts';
import { perAggregateOrder } from './perAggregateOrder.ts';
import type { InvariantResult } from './result.ts';
import { sagaFinalStates } from './sagaFinalStates.ts';
import type { Snapshot } from './snapshot.ts';
import { stockBalance } from './stockBalance.ts';

export { DUAL_WRITE_COUNTS } from './noLostOrGhostOrders.ts';
export type { InvariantResult } from './result.ts';
export { type ExpectedDeadLetters, readStock, type Snapshot, takeSnapshot } from './snapshot.ts';

/** Every invariant, in the order a reader would check them: nothing lost, nothing extra, nothing twice. */
export const INVARIANTS: ((snapshot: Snapshot) => InvariantResult)[] = [
  acknowledgedOrdersCommitted,
  everyEventPublished,
  noGhostEvents,
  noLostOrGhostOrders,
  perAggregateOrder,
  appliedExactlyOnce,
  duplicatesReconcile,
  sagaFinalStates,
  stockBalance,
  deadLettersAccounted,
  failoverAnnouncesNoLostOrder,
];

export function checkInvariants(snapshot: Snapshot): InvariantResult[] {
  return INVARIANTS.map((check) => check(snapshot));
}
